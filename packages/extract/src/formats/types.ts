/** What one format's extractor returns, before normalization. */
export interface Extracted {
  text: string;
  title?: string;
}
