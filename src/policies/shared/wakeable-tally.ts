import type { Helper } from '../../core/index.js';

/**
 * How many of a parent's children would wake something on exitIdle() (each child's Helper.updateWakeable),
 * and what the parent last told its own parent: whether any would. While none would, the parent's exitIdle()
 * has nothing to do, and its parent need not call it.
 */
export class WakeableTally {
  private count = 0;
  /** What the parent's parent last heard; a policy is taken as wakeable until it says otherwise. */
  private told = true;

  constructor(private readonly helper: Helper) {}

  /** Whether any child would wake something. */
  get any(): boolean {
    return this.count > 0;
  }

  /** One child's word changed (a child's word reaches its parent only when it changes). */
  change(wakeable: boolean): void {
    this.count += wakeable ? 1 : -1;
  }

  /** The count outright (a parent that recounts its children after an update). */
  reset(count: number): void {
    this.count = count;
  }

  /** Tells the parent's parent whether any child would wake something, if that changed since it last heard. */
  tell(): void {
    const any = this.count > 0;
    if (any === this.told) return;
    this.told = any;
    this.helper.updateWakeable?.(any);
  }
}
