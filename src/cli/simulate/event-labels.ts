// Where the HTML charts put their event labels: each label starts beside its event's marker, and labels that
// would overlap (events close in time) go to further rows, so that none is drawn over another.

/** The labels' font size, in the drawing's units. */
export const LABEL_FONT_SIZE = 11;
/** A generous average glyph width of a sans-serif font, in em: the page cannot measure its text. */
const GLYPH_EM = 0.6;
/** Distance between rows: the font size with room for ascenders and descenders. */
export const LABEL_ROW_HEIGHT = 14;
/** Space kept between two labels on one row, and between a label and its marker. */
const GAP = 6;
const MARKER_GAP = 3;

export interface EventLabel {
  /** The event's marker position. */
  readonly x: number;
  readonly text: string;
}

export interface PlacedLabel extends EventLabel {
  /** 0 for the top row. */
  readonly row: number;
  /** The text starts right of the marker, or ends left of it near the drawing's right edge. */
  readonly anchor: 'start' | 'end';
  /** Where the text is anchored. */
  readonly textX: number;
  /** Its estimated horizontal extent. */
  readonly left: number;
  readonly right: number;
}

export function estimatedWidth(text: string): number {
  return text.length * GLYPH_EM * LABEL_FONT_SIZE;
}

/**
 * Lays the labels out in rows: in order of their left edge, each takes the first row where it clears the
 * label before it by `GAP` (a greedy interval partition: as few rows as the densest moment needs).
 */
export function layoutEventLabels(labels: readonly EventLabel[], drawingWidth: number): PlacedLabel[] {
  const boxes = labels.map((label) => {
    const width = estimatedWidth(label.text);
    const fitsRight = label.x + MARKER_GAP + width <= drawingWidth;
    const textX = fitsRight ? label.x + MARKER_GAP : label.x - MARKER_GAP;
    const left = fitsRight ? textX : textX - width;
    return {
      label,
      anchor: fitsRight ? ('start' as const) : ('end' as const),
      textX,
      left,
      right: left + width,
    };
  });
  const rowEnds: number[] = [];
  const placed = new Map<EventLabel, PlacedLabel>();
  for (const box of [...boxes].sort((a, b) => a.left - b.left)) {
    let row = rowEnds.findIndex((end) => end + GAP <= box.left);
    if (row < 0) row = rowEnds.push(box.right) - 1;
    else rowEnds[row] = box.right;
    placed.set(box.label, {
      ...box.label,
      row,
      anchor: box.anchor,
      textX: box.textX,
      left: box.left,
      right: box.right,
    });
  }
  return labels.map((label) => placed.get(label)!);
}
