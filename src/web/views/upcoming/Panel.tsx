import { useState } from "preact/hooks";
import { qs, seg } from "../../lib/api.js";
import { useApi } from "../../lib/useApi.js";
import { href } from "../../lib/router.js";
import { Chips } from "../../components/Chips.js";
import { Empty, Loaded } from "../../components/States.js";
import { UpcomingTable } from "./UpcomingTable.js";
import type { UpcomingAnswer, ZoneMode } from "./model.js";

/** The job page's panel: this job's next slots over 7 days (its own zone first), excluded ones included. */
export default function UpcomingPanel({ job }: { job: string }) {
  const [mode, setMode] = useState<ZoneMode>("job");
  const data = useApi<UpcomingAnswer>(`api/upcoming${qs({ job, days: 7, per_job: 50 })}`, 60_000);
  return (
    <Loaded state={data} what="Computing the next runs">
      {(a) =>
        a.jobs.length === 0 ? (
          <Empty>{job} has no schedule: it runs by hand or after its upstream jobs.</Empty>
        ) : a.slots.length === 0 ? (
          <Empty>No slot in the next 7 days.</Empty>
        ) : (
          <>
            <Chips
              label="Times in"
              options={[
                { value: "job" as ZoneMode, label: a.jobs[0]!.timezone },
                { value: "browser" as ZoneMode, label: "This browser's zone" },
              ]}
              value={mode}
              onPick={setMode}
            />
            <UpcomingTable answer={a} mode={mode} showExcluded showJob={false} caption={`Next runs of ${job}`} />
            <p class="hint">
              {a.jobs[0]!.more ? "The first 50 slots are listed. " : ""}
              <a href={href("/upcoming", { q: job })}>All upcoming runs</a> · <code>svc next {seg(job)} --all</code> lists them on the command line.
            </p>
          </>
        )
      }
    </Loaded>
  );
}
