/** A console page: what it reads from the API, and how it shows it. */
export interface Page {
  title: string;
  /** reads the page's data (re-read every poll) */
  load(): Promise<unknown>;
  /** draws the data; `refresh` asks the router to redraw on the next poll even if the data did not change */
  // biome-ignore lint/suspicious/noExplicitAny: each page knows the shape its own load() answered
  view(data: any, refresh: () => void): Node;
}
