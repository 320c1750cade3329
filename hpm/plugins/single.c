/* single.so: as mirror.so, but only MPI task 0 prints (seed §2.7.4). The
 * task id comes from the launcher's environment (no MPI call). */
#include <stdlib.h>
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

int distributor(void) { return 0; }

int aggregator(int num_in, hpm_event_vector in, int *num_out,
               hpm_event_vector *out, int *is_print_task)
{
    *num_out = num_in;
    *out = in;
    *is_print_task = task_id() == 0;
    return 0;
}
