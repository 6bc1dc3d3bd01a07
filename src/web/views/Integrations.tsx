import { useState } from "preact/hooks";
import { api, seg } from "../lib/api.js";
import { useAction, useApi } from "../lib/useApi.js";
import type { IntegrationStatusRow } from "../lib/types.js";
import { Badge, CredentialBadge } from "../components/StatusBadge.js";
import { Empty, ErrorBox, Loaded } from "../components/States.js";
import { Time } from "../components/Time.js";

interface TestAnswer {
  ok: boolean;
  status: number | string | null;
  response: unknown;
}

function Answer({ answer }: { answer: TestAnswer }) {
  const body = typeof answer.response === "string" ? answer.response : JSON.stringify(answer.response, null, 2);
  return (
    <div class="answer" role="status">
      <Badge tone={answer.ok ? "ok" : "bad"}>{answer.ok ? "delivered" : "failed"}</Badge> remote status{" "}
      <code>{String(answer.status ?? "—")}</code>
      <pre class="details">{body || "(empty response)"}</pre>
    </div>
  );
}

function Row({ it, onTested }: { it: IntegrationStatusRow; onTested: () => void }) {
  const [answer, setAnswer] = useState<TestAnswer | null>(null);
  const test = useAction(async () => {
    const res = await api.post<TestAnswer>(`api/integrations/${seg(it.name)}/test`);
    setAnswer(res);
    onTested();
  });
  return (
    <li class="card integration">
      <div class="view-head">
        <h2>{it.name}</h2>
        <span class="sub">provider {it.provider}</span>
        <CredentialBadge status={it.credential_status} />
        <div class="head-actions">
          <button type="button" disabled={test.busy} onClick={() => void test.run()}>
            {test.busy ? "Testing…" : "Test"}
          </button>
        </div>
      </div>
      <p>
        Last test: {it.last_test_result ? <code>{it.last_test_result}</code> : <span class="muted">never tested</span>}{" "}
        {it.last_test_at && <Time iso={it.last_test_at} />}
      </p>
      {test.error && <ErrorBox error={test.error} title="Test failed" />}
      {answer && <Answer answer={answer} />}
    </li>
  );
}

export function IntegrationsView() {
  const list = useApi<{ integrations: IntegrationStatusRow[] }>("api/integrations", 15_000);
  return (
    <section>
      <div class="view-head">
        <h1>Integrations</h1>
      </div>
      <Loaded state={list} what="Loading integrations">
        {({ integrations }) =>
          integrations.length === 0 ? (
            <Empty>
              No integrations in svc.yaml. Add them under <code>integrations:</code> to send notifications.
            </Empty>
          ) : (
            <ul class="cards">
              {integrations.map((it) => (
                <Row key={it.name} it={it} onTested={() => void list.reload()} />
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}
