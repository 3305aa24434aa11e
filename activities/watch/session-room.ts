/**
 * The room the account's recognition sessions have now, which a latency plan (the calls a watch starts)
 * is cut to: how many sessions are free, and how many sessions of other calls wait for one.
 *
 * - **Waiting**: the asr task queue's backlog (Temporal's task-queue statistics): recognition tasks that
 *   no worker slot has taken. Any backlog means calls are already waiting, and the throughput plan serves
 *   them best.
 * - **Free**: with an account limit (`CALLPIPE_ASR_ACCOUNT_SESSIONS`), the limit less the recognition
 *   sessions the asr workers told the account's budget they run (workflows/session-budget.ts, its
 *   existing query). Not less its leases: a worker takes a lease before it polls, so idle polls hold
 *   leases (up to five per asr process) and an idle account would look nearly full. Without an account
 *   limit nobody caps the sessions across processes: the room is one asr process's cap (the planner's
 *   budget), and only the backlog says the account is busy.
 *
 * Runs beside the workflows (task queue `callpipe`): Temporal calls only, answered in milliseconds.
 */
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { SessionRoom } from '../../schemas/plan.ts';

/** temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY */
const TASK_QUEUE_TYPE_ACTIVITY = 2;
/** The budget workflow's existing query (workflows/session-budget.ts `sessionBudgetQuery`), by its name. */
export const SESSION_BUDGET_QUERY = 'sessionBudget';

/** What this module reads of the budget's view. */
interface BudgetView {
  limit: number;
  leased: number;
  /** Recognition attempts the workers reported running (absent from budgets before that report). */
  running?: number;
}

export interface SessionRoomInput {
  /** The call's recognition task queue. */
  asrQueue: string;
  /** Sessions of one asr process (the call's plan budget): the limit when no account budget runs. */
  workerSessions: number;
}

export interface SessionRoomDeps {
  temporal?: Client | undefined;
  /** The account's budget workflow (workers/session-budget-client.ts `sessionBudgetAddress`). */
  budgetWorkflowId?: string | undefined;
  /** Whether the account's limit is set (`CALLPIPE_ASR_ACCOUNT_SESSIONS`): the budget runs either way. */
  accountLimit?: boolean | undefined;
}

/** Recognition tasks waiting in `queue` for a worker slot. */
async function backlogOf(temporal: Client, queue: string): Promise<number> {
  const described = await temporal.workflowService.describeTaskQueue({
    namespace: temporal.options.namespace,
    taskQueue: { name: queue },
    taskQueueType: TASK_QUEUE_TYPE_ACTIVITY,
    reportStats: true,
  });
  return Number(described.stats?.approximateBacklogCount ?? 0);
}

/** The account budget's limit and leases, or undefined when no budget runs. */
async function budgetOf(temporal: Client, workflowId: string | undefined) {
  if (!workflowId) return undefined;
  try {
    return await temporal.workflow.getHandle(workflowId).query<BudgetView>(SESSION_BUDGET_QUERY);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

export async function sessionRoom(deps: SessionRoomDeps, input: SessionRoomInput): Promise<SessionRoom> {
  const { temporal } = deps;
  // A worker without a client cannot judge: no room, so the call gets the throughput plan.
  if (!temporal) return { free: 0, waiting: 0, limit: Math.max(1, input.workerSessions), source: 'worker' };
  const [waiting, budget] = await Promise.all([
    backlogOf(temporal, input.asrQueue),
    deps.accountLimit ? budgetOf(temporal, deps.budgetWorkflowId) : undefined,
  ]);
  if (budget)
    return {
      free: Math.max(0, budget.limit - (budget.running ?? budget.leased)),
      waiting,
      limit: budget.limit,
      source: 'account',
    };
  const limit = Math.max(1, input.workerSessions);
  return { free: limit, waiting, limit, source: 'worker' };
}
