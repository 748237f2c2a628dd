// The checkout's root, for the files the gateway reads at run time (sql/, web/dist). This file
// sits one folder below the root, and so does the compiled bundle (dist/airouter.js, see
// build/server.ts): the same relative step is right in both.

import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
