import { Observable } from 'rxjs';

/**
 * Emits `ping` whenever the source has been silent for `intervalMs`, once the source has
 * emitted something (clients expect pings only after the stream's opening event).
 */
export function keepAlive(intervalMs: number, ping: Buffer) {
  return (source: Observable<Buffer>) =>
    new Observable<Buffer>((subscriber) => {
      let timer: NodeJS.Timeout | undefined;
      // One timer per stream, pushed back on every event: thousands of streams each emitting
      // many events would otherwise allocate a timer per event.
      const arm = () => {
        if (timer) timer.refresh();
        else
          timer = setTimeout(function fire() {
            subscriber.next(ping);
            timer!.refresh();
          }, intervalMs);
      };
      const sub = source.subscribe({
        next(chunk) {
          subscriber.next(chunk);
          arm();
        },
        error(err) {
          clearTimeout(timer);
          subscriber.error(err);
        },
        complete() {
          clearTimeout(timer);
          subscriber.complete();
        },
      });
      return () => {
        clearTimeout(timer);
        sub.unsubscribe();
      };
    });
}
