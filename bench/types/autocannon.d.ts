// The part of autocannon's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    overallRate?: number;
  }
  interface Histogram {
    mean: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
  }
  interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    latency: Histogram;
    requests: Histogram & { total: number };
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
