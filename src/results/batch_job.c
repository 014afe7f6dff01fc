/* batch_job.c - the Slurm job a run belongs to, as Slurm's environment says, so that a
 * result file names the job, array task and node it came from. */
#include "results.h"

#include <stdlib.h>

static void get(const char *name, char *buf, size_t cap) {
  const char *v = getenv(name);
  snprintf(buf, cap, "%s", v ? v : "");
}

bool tkb__batch_job_read(tkb__batch_job *j) {
  get("SLURM_JOB_ID", j->job_id, sizeof j->job_id);
  get("SLURM_ARRAY_JOB_ID", j->array_job_id, sizeof j->array_job_id);
  get("SLURM_ARRAY_TASK_ID", j->array_task_id, sizeof j->array_task_id);
  get("SLURM_PROCID", j->procid, sizeof j->procid);
  get("SLURMD_NODENAME", j->node, sizeof j->node);
  get("SLURM_CLUSTER_NAME", j->cluster, sizeof j->cluster);
  return j->job_id[0] != '\0';
}
