// The live view's style sheet, served as /static/live-view.css.
export const LIVE_VIEW_STYLE = `body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
#connection { float: right; font-size: 0.85em; padding: 0.1em 0.6em; border-radius: 1em; background: #eee; }
#connection.live { background: #d7f5dd; } #connection.down { background: #fde2e1; }
table { border-collapse: collapse; } td { padding: 0.15em 0.8em 0.15em 0; vertical-align: top; }
tr.header td { font-weight: 600; border-bottom: 1px solid #ccc; }
.layout { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 2em; }
.node { border-left: 3px solid #c8c8d0; padding-left: 0.7em; margin: 0.3em 0; }
.node[data-state=READY] { border-color: #34a853; } .node[data-state=TRANSIENT_FAILURE] { border-color: #d93025; }
.node[data-state=CONNECTING] { border-color: #f9ab00; }
.head .policy { font-weight: 600; margin-right: 0.5em; }
.state { font-size: 0.8em; padding: 0 0.4em; border-radius: 0.3em; background: #eee; }
.s-READY { background: #d7f5dd; } .s-TRANSIENT_FAILURE { background: #fde2e1; } .s-CONNECTING { background: #fff1c9; }
.status { color: #a50e0e; margin-left: 0.5em; } .facts { color: #555; margin-left: 0.7em; font-size: 0.9em; }
ul.children { list-style: none; padding-left: 1em; margin: 0; } .edge { color: #444; font-family: monospace; }
table.subchannels td.address { font-family: monospace; } .empty { color: #777; }
tr.resource.other { color: #999; } tr.resource[data-status=NACKED] td { color: #a50e0e; }
`;
