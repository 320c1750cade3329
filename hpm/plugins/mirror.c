/* mirror.so: the input, one to one, printed on every task (seed §2.7.4). */
#include "hpm_agg.h"

int distributor(void) { return 0; }

int aggregator(int num_in, hpm_event_vector in, int *num_out,
               hpm_event_vector *out, int *is_print_task)
{
    *num_out = num_in;
    *out = in;
    *is_print_task = TRUE;
    return 0;
}
