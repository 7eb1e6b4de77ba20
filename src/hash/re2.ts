// re2js, loaded on the first regex instead of with the modules that may compile one: it is about 260 KB of
// JavaScript, and an `xds:` channel whose routes and hash policies hold no regex would otherwise pay for it on
// its way to its first call (issue 25 §4). The load is synchronous (its CommonJS build), because patterns are
// compiled while a resource is validated.
import { createRequire } from 'node:module';

type Re2js = typeof import('re2js');

let loaded: Re2js | undefined;

/** re2js's exports, loaded the first time they are asked for. */
export function re2js(): Re2js {
  loaded ??= createRequire(import.meta.url)('re2js') as Re2js;
  return loaded;
}
