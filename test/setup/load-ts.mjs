// Preloaded into every test process (.taprc node-arg): TypeScript through tsx, as every script
// of the project runs it, with its transforms cached on disk between processes (tap's own
// ts-node plugin compiled the gateway's modules again in each of the suite's files: about
// 1.5 CPU s a file).
//
// tsx puts the sources' text into its source maps only when it sees NODE_V8_COVERAGE, and
// without that text tap's coverage report counts each file as one line. tsx reads the variable
// where its hooks run: in the loader thread (another test hook started it before this module
// runs, with a copy of the environment) and here. It is set in both for tsx's start only; Node
// itself writes no coverage files of its own, since it reads the variable once, at its start.
import { register } from 'node:module';

const NAME = 'NODE_V8_COVERAGE';
const set = !(NAME in process.env);
if (set) {
  const setInLoaderThread = `process.env.${NAME} ??= 'tsx-source-maps';`;
  register(`data:text/javascript,${encodeURIComponent(setInLoaderThread)}`);
  process.env[NAME] = 'tsx-source-maps';
}
await import('tsx');
if (set) delete process.env[NAME];
