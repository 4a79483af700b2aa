/** A console page: what it reads from the API, and how it shows it. */
export interface Page {
  title: string;
  /** reads the page's data (again after every poll); `signal` aborts a read when the reader leaves the page */
  load(signal: AbortSignal): Promise<unknown>;
  /**
   * Whether the next load() waits for a change itself (a long poll), so the router reads again at once instead of
   * after its polling interval; absent: every page polls.
   */
  // biome-ignore lint/suspicious/noExplicitAny: each page knows the shape its own load() answered
  waits?(data: any): boolean;
  /** draws the data; `refresh` asks the router to redraw on the next poll even if the data did not change */
  // biome-ignore lint/suspicious/noExplicitAny: each page knows the shape its own load() answered
  view(data: any, refresh: () => void): Node;
}
