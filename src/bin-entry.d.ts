/** The build's entry under `root` when it is newer than every file it was built from; else undefined. */
export function builtEntry(root: string): string | undefined;
