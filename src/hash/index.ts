// A42 request hashing: XXH64 and the hash policies an xDS route (or any upper layer) evaluates per call.
export * from './hash-policy.js';
export * from './header-value.js';
export { re2js } from './re2.js';
export * from './regex-rewrite.js';
export { joinU64, splitU64 } from './u64.js';
export { Utf8Buffer } from './utf8.js';
export { xxh64, xxh64Into } from './xxh64.js';
