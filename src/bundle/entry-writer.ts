// What extraction writes admitted entries to; its own file so that the writers (tree-writer.ts,
// src/oci/bundle-layer.ts) do not import the extractor that drives them.

/**
 * Where admitted archive entries go: a TreeWriter (files on a sink: the disk, or none) or the OCI
 * layer writer (a layer streamed to a registry). Entries arrive in archive order, already checked
 * by the safety policy; `flush` runs after each inflated chunk and may return a promise to hold
 * back the inflater and the download until the entries' bytes are taken.
 */
export interface EntryWriter {
  dir(path: string): void;
  /** A regular file of `size` bytes; its data follows, then `end`. */
  file(path: string, size: number): void;
  data(chunk: Buffer): void;
  end(): void;
  symlink(path: string, target: string): void;
  /** A hard link to a regular file written before. */
  link(path: string, target: string): void;
  flush(): void | Promise<void>;
  /** Nothing more is written (a refusal or a failure). */
  stop(): void;
}
