// Reading V8 heap snapshots (.heapsnapshot, as `--heapsnapshot-signal` or the inspector write
// them) for what a process holds per open stream: its objects by kind and constructor, and the
// objects whose hidden class is theirs alone (on Node 20, `{ ...o, key }` where `o` lacks `key`
// made one per copy: a map and descriptors each, and an inline-cache miss at every read).

import { readFileSync } from 'node:fs';

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Bytes and count of one kind of object (`type:name`; strings and code by type alone). */
export interface Held {
  kind: string;
  count: number;
  bytes: number;
}

export class HeapSnapshot {
  private readonly nodeFields: number;
  private readonly edgeFields: number;
  private readonly types: string[];
  private readonly edgeTypes: string[];
  private readonly firstEdge: Uint32Array;

  constructor(private readonly raw: RawSnapshot) {
    const meta = raw.snapshot.meta;
    this.nodeFields = meta.node_fields.length;
    this.edgeFields = meta.edge_fields.length;
    this.types = meta.node_types[0];
    this.edgeTypes = meta.edge_types[0];
    const count = raw.nodes.length / this.nodeFields;
    this.firstEdge = new Uint32Array(count + 1);
    for (let i = 0, e = 0; i < count; i++) {
      this.firstEdge[i] = e;
      e += raw.nodes[i * this.nodeFields + 4]! * this.edgeFields;
      this.firstEdge[i + 1] = e;
    }
  }

  static read(file: string): HeapSnapshot {
    return new HeapSnapshot(JSON.parse(readFileSync(file, 'utf8')) as RawSnapshot);
  }

  get nodeCount(): number {
    return this.raw.nodes.length / this.nodeFields;
  }

  private type(i: number): string {
    return this.types[this.raw.nodes[i * this.nodeFields]!]!;
  }

  private name(i: number): string {
    return this.raw.strings[this.raw.nodes[i * this.nodeFields + 1]!]!;
  }

  /** Every kind of object held, largest first. Strings and code are one kind each, whatever their text. */
  composition(): Held[] {
    const kinds = new Map<string, Held>();
    for (let i = 0; i < this.nodeCount; i++) {
      const type = this.type(i);
      const name = type.includes('string') || type === 'code' || type === 'number' ? '' : this.name(i).slice(0, 60);
      const kind = `${type}:${name}`;
      const held = kinds.get(kind) ?? { kind, count: 0, bytes: 0 };
      held.count++;
      held.bytes += this.raw.nodes[i * this.nodeFields + 3]!;
      kinds.set(kind, held);
    }
    return [...kinds.values()].sort((a, b) => b.bytes - a.bytes);
  }

  /**
   * Objects of one constructor and one set of keys, each with a hidden class of its own: `min` or
   * more of them. A snapshot shows keys whose values are objects or strings; small integers have
   * no node of their own, so their keys are not in the set.
   */
  ownShapes(min: number): { keys: string; classes: number; objects: number }[] {
    const { edges, strings } = this.raw;
    const shapes = new Map<string, { classes: Set<number>; objects: number }>();
    for (let i = 0; i < this.nodeCount; i++) {
      if (this.type(i) !== 'object') continue;
      let map = -1;
      const keys: string[] = [];
      for (let e = this.firstEdge[i]!; e < this.firstEdge[i + 1]!; e += this.edgeFields) {
        const edgeType = this.edgeTypes[edges[e]!];
        const edgeName = strings[edges[e + 1]!];
        if (edgeType === 'internal' && edgeName === 'map') map = edges[e + 2]!;
        else if (edgeType === 'property' && edgeName !== '__proto__') keys.push(edgeName!);
      }
      // Class prototypes (with `constructor`) each have a class of their own, as they should.
      if (map === -1 || keys.length === 0 || keys.includes('constructor')) continue;
      // Sorted: a snapshot does not list an object's properties in one order for every kind of class.
      const key = `${this.name(i)}{${keys.sort().join(',')}}`;
      const shape = shapes.get(key) ?? { classes: new Set<number>(), objects: 0 };
      shape.classes.add(map);
      shape.objects++;
      shapes.set(key, shape);
    }
    return [...shapes]
      .filter(([, s]) => s.classes.size >= min && s.classes.size === s.objects)
      .map(([keys, s]) => ({ keys, classes: s.classes.size, objects: s.objects }))
      .sort((a, b) => b.classes - a.classes);
  }

  /**
   * Async functions suspended at an await (and generators), counted by the function's name: each
   * keeps its frame, every local in it, for as long as it waits.
   */
  suspended(): Map<string, number> {
    const { edges, strings } = this.raw;
    const counts = new Map<string, number>();
    for (let i = 0; i < this.nodeCount; i++) {
      if (this.type(i) !== 'object' || this.name(i) !== 'Generator') continue;
      for (let e = this.firstEdge[i]!; e < this.firstEdge[i + 1]!; e += this.edgeFields) {
        const edgeType = this.edgeTypes[edges[e]!];
        // Elements and hidden edges name an index, not a string.
        if (edgeType === 'element' || edgeType === 'hidden' || strings[edges[e + 1]!] !== 'function') continue;
        const fn = this.name(edges[e + 2]! / this.nodeFields) || '(anonymous)';
        counts.set(fn, (counts.get(fn) ?? 0) + 1);
        break;
      }
    }
    return counts;
  }
}

/** What `after` holds more than `before`, by kind, largest first. */
export function heldMore(before: Held[], after: Held[]): Held[] {
  const was = new Map(before.map((h) => [h.kind, h]));
  return after
    .map((h) => ({
      kind: h.kind,
      count: h.count - (was.get(h.kind)?.count ?? 0),
      bytes: h.bytes - (was.get(h.kind)?.bytes ?? 0),
    }))
    .sort((a, b) => b.bytes - a.bytes);
}
