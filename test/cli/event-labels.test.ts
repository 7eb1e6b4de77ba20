// The event labels of `lbtree simulate --html`: on a dense timeline (events a second apart, some at the same
// moment, one at the right edge) no label is drawn over another.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { htmlReport } from '../../src/cli/simulate/html.js';
import { textReport } from '../../src/cli/simulate/report.js';
import { runScenario } from '../../src/cli/simulate/run-scenario.js';
import { parseScenario } from '../../src/cli/simulate/scenario.js';
import { clusterToTreeFromJson } from '../../src/xds/index.js';

const example = (name: string) => parse(readFileSync(join('examples/simulate', name), 'utf8'));

/** What a page's text box covers, at about 0.6 em per glyph (a sans-serif's average, generously). */
interface Box {
  readonly text: string;
  readonly left: number;
  readonly right: number;
  readonly top: number;
  readonly bottom: number;
}

function textBoxes(svg: string, wanted: ReadonlySet<string>): Box[] {
  const boxes: Box[] = [];
  for (const [, attributes, text] of svg.matchAll(/<text([^>]*)>([^<]*)<\/text>/g)) {
    if (!wanted.has(text!)) continue;
    const attribute = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(attributes!)?.[1];
    const x = Number(attribute('x'));
    const y = Number(attribute('y'));
    const size = Number(attribute('font-size'));
    const width = text!.length * 0.6 * size;
    const left = attribute('text-anchor') === 'end' ? x - width : x;
    boxes.push({ text: text!, left, right: left + width, top: y - 0.8 * size, bottom: y + 0.2 * size });
  }
  return boxes;
}

const overlap = (a: Box, b: Box) =>
  a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

test('simulate --html: labels of events close in time do not overlap (rows), and stay in the drawing', () => {
  const localities = ['us-east1-a', 'us-east1-b', 'us-west1-a'];
  // Two events every 2 s (fail / recover of a locality), and one at the right edge.
  const events: { at: string; action: string; target: Record<string, string> }[] = Array.from(
    { length: 14 },
    (_, i) => ({
      at: `${2 + 2 * Math.floor(i / 2)}s`,
      action: i % 4 < 2 ? 'fail' : 'recover',
      target: { locality: localities[i % 3]! },
    }),
  );
  events.push({ at: '29s', action: 'unhealthy', target: { endpoint: '10.1.1.2:8080' } });
  const scenario = parseScenario({
    duration: '30s',
    rps: 20,
    events: events.map((e) => ({ at: e.at, [e.action]: e.target })),
  });
  const tree = clusterToTreeFromJson(
    example('cluster-wrr-locality.yaml'),
    example('endpoints-two-priorities.yaml'),
  );
  const report = runScenario(tree, scenario);
  const page = htmlReport(report, 'dense', textReport(report), scenario);
  const labels = new Set(events.map((e) => `${e.action} ${Object.values(e.target)[0]}`));

  const charts = [
    ...page.matchAll(
      /<svg viewBox="0 0 (\d+) (\d+)" role="img" aria-label="share by [^"]+">([\s\S]*?)<\/svg>/g,
    ),
  ];
  assert.ok(charts.length >= 2, 'a chart per dimension');
  for (const [, width, height, svg] of charts) {
    const boxes = textBoxes(svg!, labels);
    assert.equal(boxes.length, events.length, 'every event is labelled');
    for (const [i, a] of boxes.entries()) {
      assert.ok(a.left >= 0 && a.right <= Number(width), `"${a.text}" within the width`);
      assert.ok(a.top >= 0 && a.bottom <= Number(height), `"${a.text}" within the height`);
      for (const b of boxes.slice(i + 1))
        assert.ok(
          !overlap(a, b),
          `"${a.text}" [${a.left}, ${a.right}] × [${a.top}, ${a.bottom}] overlaps "${b.text}" [${b.left}, ${b.right}] × [${b.top}, ${b.bottom}]`,
        );
    }
  }
});
