/* loc_merge.so: per task, all groups (multiplexed or changed during the
 * measurement) joined into one element whose values are already scaled to
 * the whole interval (seed §2.7.4). Every task prints. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hpm_agg.h"

int distributor(void) { return 0; }

int aggregator(int num_in, hpm_event_vector in, int *num_out,
               hpm_event_vector *out, int *is_print_task)
{
    int i, n = 0, k = 0, first = -1;
    hpm_data_item *v;
    for (i = 0; i < num_in; i++)
        if (!in[i].is_rusage) {
            n += in[i].num_data;
            if (first < 0) first = i;
        }
    *is_print_task = TRUE;
    if (first < 0) { *num_out = num_in; *out = in; return 0; }
    v = calloc(2, sizeof *v);
    if (!v) return errno;
    *num_out = 0;
    if (in[0].is_rusage) v[(*num_out)++] = in[0];
    v[*num_out] = in[first];
    v[*num_out].data = calloc(n ? n : 1, sizeof(hpm_event_info));
    if (!v[*num_out].data) return errno;
    for (i = 0; i < num_in; i++)
        if (!in[i].is_rusage) {
            memcpy(v[*num_out].data + k, in[i].data, in[i].num_data * sizeof(hpm_event_info));
            k += in[i].num_data;
        }
    v[*num_out].num_data = n;
    v[*num_out].is_mplex_cont = FALSE;
    v[*num_out].description = "loc_merge";
    (*num_out)++;
    *out = v;
    return 0;
}
