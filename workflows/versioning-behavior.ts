/**
 * How a workflow type moves between builds under Worker Versioning (workers/versioning.ts): PINNED runs
 * end on the build they started on, AUTO_UPGRADE runs move to the current build at their next workflow
 * task. Declared only when the worker has a Deployment Version: the server refuses a versioning behavior
 * from an unversioned worker (the workflow tests' own workers, a replay), and there it means nothing.
 */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import type { VersioningBehavior } from '@temporalio/common';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function declareVersioning<A extends any[], R>(
  behavior: VersioningBehavior,
  workflow: (...args: A) => Promise<R>,
): void {
  setWorkflowOptions(
    // An unversioned worker reports its build id with no deployment name.
    () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: behavior } : {}),
    workflow,
  );
}
