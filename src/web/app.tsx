import { Header } from "./components/Header.js";
import { Notices } from "./components/Notices.js";
import { TokenPrompt } from "./components/TokenPrompt.js";
import { lazy } from "./components/Lazy.js";
import { useRoute, type Route } from "./lib/router.js";
import { Overview } from "./views/Overview.js";
import { JobView } from "./views/Job.js";
import { RunView } from "./views/Run.js";
import { AuditView } from "./views/Audit.js";
import { DbView } from "./views/Db.js";
import { IntegrationsView } from "./views/Integrations.js";
import { ConfigView } from "./views/Config.js";
import { DaemonView } from "./views/Daemon.js";
import { BackfillsView, BackfillView } from "./views/Backfill.js";
import { Empty } from "./components/States.js";
import { useEffect } from "preact/hooks";

// dagre is the heaviest dependency: the graph view is its own chunk.
const GraphView = lazy(() => import("./views/Graph.js"), "the graph");
const TimelineView = lazy(() => import("./views/Timeline.js"), "the timeline");
const UpcomingView = lazy(() => import("./views/Upcoming.js"), "the upcoming runs");

function NotFound({ route }: { route: Route }) {
  return (
    <section>
      <h1>Not found</h1>
      <Empty>
        No view at <code>#/{route.parts.join("/")}</code>. <a href="#/">Back to the overview</a>.
      </Empty>
    </section>
  );
}

function View({ route }: { route: Route }) {
  const [first, second] = route.parts;
  switch (first) {
    case undefined:
      return <Overview route={route} />;
    case "jobs":
      return second ? <JobView key={second} name={second} route={route} /> : <Overview route={route} />;
    case "runs":
      return second && /^\d+$/.test(second) ? <RunView key={second} id={Number(second)} /> : <NotFound route={route} />;
    case "graph":
      return <GraphView route={route} />;
    case "backfills":
      if (second === undefined) return <BackfillsView />;
      return /^\d+$/.test(second) ? <BackfillView key={second} id={Number(second)} route={route} /> : <NotFound route={route} />;
    case "timeline":
      return <TimelineView route={route} />;
    case "upcoming":
      return <UpcomingView route={route} />;
    case "audit":
      return <AuditView route={route} />;
    case "db":
      return <DbView key={second ?? ""} table={second ?? "job_runs"} route={route} />;
    case "integrations":
      return <IntegrationsView />;
    case "config":
      return <ConfigView />;
    case "daemon":
      return <DaemonView />;
    default:
      return <NotFound route={route} />;
  }
}

const TITLES: Record<string, string> = {
  jobs: "Job",
  runs: "Run",
  backfills: "Backfill",
  graph: "Graph",
  timeline: "Timeline",
  upcoming: "Upcoming",
  audit: "Audit",
  db: "Database",
  integrations: "Integrations",
  config: "Config",
  daemon: "Daemon",
};

export function App() {
  const route = useRoute();
  const section = route.parts[0];
  useEffect(() => {
    const what = section ? `${TITLES[section] ?? "svc"}${route.parts[1] ? ` ${route.parts[1]}` : ""}` : "Overview";
    document.title = `${what} · svc`;
  }, [section, route.parts[1]]);
  return (
    <>
      <a class="skip-link" href="#main" onClick={(e) => {
        e.preventDefault();
        document.getElementById("main")?.focus();
      }}>
        Skip to content
      </a>
      <Header section={section ?? ""} />
      <main id="main" tabIndex={-1}>
        <View route={route} />
      </main>
      <Notices />
      <TokenPrompt />
    </>
  );
}
