// The per-day chart (uPlot): spend as bars on the left axis, tokens as a line on the right.
// Loaded on its own, only by the overview page, so the other pages do not carry uPlot (its
// small stylesheet is in the main bundle: esbuild does not attach CSS to lazy chunks).

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface DayPoint {
  /** UTC midnight, seconds. */
  t: number;
  spend: number;
  tokens: number;
}

/** Room for the longest tick label (sub-cent spends have many digits). */
const labelWidth = (_u: uPlot, values: string[] | null) => 18 + 7 * Math.max(3, ...(values ?? []).map((v) => v.length));

export default function DayChart({ points, labels }: { points: DayPoint[]; labels: { spend: string; tokens: string } }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const width = () => Math.max(260, el.clientWidth);
    const data: uPlot.AlignedData = [points.map((p) => p.t), points.map((p) => p.spend), points.map((p) => p.tokens)];
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, usd: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] }, tok: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        series: [
          {},
          { label: labels.spend, scale: 'usd', stroke: '#0b6e4f', fill: 'rgba(11,110,79,0.35)', paths: uPlot.paths.bars!({ size: [0.6, 48] }), value: (_u, v) => (v == null ? '—' : `$${v.toFixed(6)}`) },
          { label: labels.tokens, scale: 'tok', stroke: '#c2571a', width: 2, points: { size: 6 } },
        ],
        axes: [
          {},
          { scale: 'usd', values: (_u, vals) => vals.map((v) => `$${+v.toPrecision(3)}`), size: labelWidth },
          { scale: 'tok', side: 1, grid: { show: false }, size: labelWidth },
        ],
      },
      data,
      el,
    );
    const onResize = () => plot.setSize({ width: width(), height: 240 });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [points, labels.spend, labels.tokens]);
  return <div ref={box} class="chart" role="img" aria-label={`${labels.spend}, ${labels.tokens}`} />;
}
