// Its own module so that the command line can recognise a catalogue error without loading the
// catalogue, which loads every dialect (and with them the stream stack) to check its providers.

export class CatalogueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogueError';
  }
}
