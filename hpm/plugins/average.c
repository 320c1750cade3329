/* average.so, distributor part (seed §2.7.4): the comma list of
 * HPM_EVENT_SET is handed out round robin over the MPI tasks (task id from
 * the launcher's environment). The cross-task average needs MPI: hpm-rs
 * takes it in `hpmcount merge -a average` over the tasks' CSV files; this
 * aggregator mirrors, every task printing (its CSV, too). */
#include <stdlib.h>
#include <string.h>
#include "hpm_agg.h"

static int task_id(void)
{
    const char *v[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                       "MV2_COMM_WORLD_RANK", "SLURM_PROCID", 0};
    int i;
    for (i = 0; v[i]; i++)
        if (getenv(v[i])) return atoi(getenv(v[i]));
    return 0;
}

int distributor(void)
{
    const char *set = getenv("HPM_EVENT_SET");
    char *copy, *tok, *save = 0;
    int n = 0, want, i = 0;
    if (!set || !strchr(set, ',')) return 0;
    copy = strdup(set);
    if (!copy) return -1;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(0, ",", &save)) n++;
    free(copy);
    want = task_id() % n;
    copy = strdup(set);
    if (!copy) return -1;
    save = 0;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(0, ",", &save), i++)
        if (i == want) { setenv("HPM_EVENT_SET", tok, 1); break; }
    free(copy);
    return 0;
}

int aggregator(int num_in, hpm_event_vector in, int *num_out,
               hpm_event_vector *out, int *is_print_task)
{
    *num_out = num_in;
    *out = in;
    *is_print_task = TRUE;
    return 0;
}
