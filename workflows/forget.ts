/**
 * forget: erases calls everywhere callpipe wrote them (activities/lifecycle/lifecycle-activities.ts, in
 * that order): their objects, their table rows, their report lines, their workflow executions; then
 * verifies by listing and reading back, and writes the audit record. The workflow id is the request's
 * id (derived from the calls and options by the CLI or by retention), so the same request twice is one
 * erasure; every step is idempotent, so a retry or a resumed run converges.
 *
 * Retention runs the same workflow, for whole calls or for one kind of their objects (`onlyKinds`).
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { LifecycleActivities } from '../activities/lifecycle/lifecycle-activities.ts';
import type { AuditRecord, ForgetInput, ForgottenCall } from '../schemas/lifecycle.ts';
import { RETRY_POLICIES } from './activity-policies.ts';

export type { ForgetInput } from '../schemas/lifecycle.ts';

/** Calls per objects step: one activity's heartbeats cover a few calls' listings and deletes. */
const CALLS_PER_STEP = 20;

export interface ForgetResult {
  audit: AuditRecord;
  auditKey: string;
}

export async function forget(input: ForgetInput): Promise<ForgetResult> {
  const a = proxyActivities<LifecycleActivities>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '2 minutes',
    retry: RETRY_POLICIES.lifecycle,
  });
  // Verification waits for Temporal's visibility to drop deleted executions: more, slower attempts.
  const verify = proxyActivities<LifecycleActivities>({
    taskQueue: workflowInfo().taskQueue,
    startToCloseTimeout: '10 minutes',
    retry: RETRY_POLICIES.lifecycleVerify,
  });
  const { callIds, places, recordings, onlyKinds } = input;
  const whole = !onlyKinds;

  const calls = new Map<string, ForgottenCall>(
    callIds.map((callId) => [
      callId,
      { callId, objects: {}, tableRows: {}, reportsRewritten: 0, workflowExecutions: 0 },
    ]),
  );
  for (let i = 0; i < callIds.length; i += CALLS_PER_STEP) {
    const counts = await a.forgetObjects({
      callIds: callIds.slice(i, i + CALLS_PER_STEP),
      places,
      recordings,
      onlyKinds,
    });
    for (const [id, byKind] of Object.entries(counts)) calls.get(id)!.objects = byKind;
  }
  let days: string[] = [];
  if (whole) {
    const rows = await a.forgetTableRows({ callIds, places });
    days = rows.days;
    for (const [id, byTable] of Object.entries(rows.rows)) calls.get(id)!.tableRows = byTable;
    const reports = await a.forgetReportLines({ callIds, places });
    for (const [id, n] of Object.entries(reports)) calls.get(id)!.reportsRewritten = n;
    const executions = await a.forgetExecutions({ callIds });
    for (const [id, n] of Object.entries(executions)) calls.get(id)!.workflowExecutions = n;
  }
  await verify.verifyForgotten({ callIds, places, onlyKinds, days });

  const list = [...calls.values()];
  const sum = (f: (c: ForgottenCall) => number) => list.reduce((n, c) => n + f(c), 0);
  const values = (r: Record<string, number | undefined>) =>
    Object.values(r).reduce<number>((n, v) => n + (v ?? 0), 0);
  const audit: AuditRecord = {
    requestId: input.requestId,
    reason: input.reason,
    at: new Date().toISOString(),
    recordings,
    ...(onlyKinds ? { onlyKinds } : {}),
    calls: list,
    totals: {
      calls: list.length,
      objects: sum((c) => values(c.objects)),
      tableRows: sum((c) => values(c.tableRows)),
      reportsRewritten: sum((c) => c.reportsRewritten),
      workflowExecutions: sum((c) => c.workflowExecutions),
    },
    verified: true,
  };
  const auditKey = await a.writeAudit({ places, record: audit });
  return { audit, auditKey };
}
