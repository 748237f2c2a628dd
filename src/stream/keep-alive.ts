import { Observable } from 'rxjs';

/**
 * Emits `ping` whenever the source has been silent for `intervalMs`, once the source has
 * emitted something (clients expect pings only after the stream's opening event).
 */
export function keepAlive(intervalMs: number, ping: Buffer) {
  return (source: Observable<Buffer>) =>
    new Observable<Buffer>((subscriber) => {
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          subscriber.next(ping);
          arm();
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
