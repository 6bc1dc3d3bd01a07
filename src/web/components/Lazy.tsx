import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ErrorBox, Loading } from "./States.js";
import { ApiError } from "../lib/api.js";

/**
 * Code-split a heavy component (dagre, uPlot): its chunk is fetched the
 * first time it renders, so the overview never pays for it.
 */
export function lazy<P extends object>(load: () => Promise<{ default: ComponentType<P> }>, what: string) {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  return function Lazy(props: P) {
    const [, setReady] = useState(0);
    const [error, setError] = useState<ApiError | null>(null);
    useEffect(() => {
      if (loaded) return;
      pending ??= load().then((m) => (loaded = m.default));
      pending.then(
        () => setReady(1),
        (e: unknown) => {
          pending = null;
          setError(new ApiError(0, "chunk", `Could not load ${what}: ${e instanceof Error ? e.message : String(e)}`));
        },
      );
    }, []);
    if (error) return <ErrorBox error={error} />;
    const C = loaded;
    return C ? <C {...props} /> : <Loading what={`Loading ${what}`} />;
  };
}
