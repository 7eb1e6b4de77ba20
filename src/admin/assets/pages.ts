import { LIVE_VIEW_SCRIPT } from './live-view-script.js';
import { LIVE_VIEW_STYLE } from './live-view-style.js';

/** Every file /static/ serves, by name: the package's own, held in memory (no path reaches the disk). */
export const STATIC_ASSETS: ReadonlyMap<string, { readonly type: string; readonly body: string }> = new Map([
  ['live-view.js', { type: 'text/javascript; charset=utf-8', body: LIVE_VIEW_SCRIPT }],
  ['live-view.css', { type: 'text/css; charset=utf-8', body: LIVE_VIEW_STYLE }],
]);

/** The list of channels; its links and script are relative, so the view works under any mount path. */
export function indexPage(): string {
  return page(
    'index',
    '',
    'static/',
    '<h1 id="title">lbtree channels</h1><div id="channels"><p class="empty">Loading…</p></div>' +
      '<p>JSON: <a href="channels.json">channels.json</a>; each channel: channels/<i>id</i>.json.</p>',
  );
}

/** One channel's page; `id` is a checked channel id (digits). */
export function channelPage(id: string): string {
  return page(
    'channel',
    id,
    '../static/',
    `<p><a href="../">All channels</a> · <a href="${id}.json">JSON</a> · <a href="${id}/recording.lbrec">Flight recording</a></p><h1 id="title">Channel ${id}</h1>` +
      '<p id="summary"></p><div class="layout"><section id="tree"><p class="empty">Loading…</p></section>' +
      '<div><section id="xds"></section><section id="metrics"></section></div></div>',
  );
}

function page(kind: string, id: string, assets: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lbtree live view</title>
<link rel="stylesheet" href="${assets}live-view.css"></head>
<body data-page="${kind}" data-channel="${id}"><span id="connection">connecting</span>
${body}
<script src="${assets}live-view.js"></script></body></html>
`;
}
