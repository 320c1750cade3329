/* hpm_data.h: the data handed to HPM aggregator plug-ins (seed §2.7.6,
 * §3.12.6). hpm_data_item and hpm_event_vector are the guide's; the guide
 * does not define hpm_event_info, this is hpm-rs's. */
#ifndef HPM_DATA_H
#define HPM_DATA_H

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/*      NAME                INDEX */
#define HPM_NTIM 8
#define HPM_TIME_WALLCLOCK    0
#define HPM_TIME_CYCLE        1
#define HPM_TIME_USER         2
#define HPM_TIME_SYSTEM       3
#define HPM_TIME_START        4
#define HPM_TIME_STOP         5
#define HPM_TIME_OVERHEAD     6
#define HPM_TIME_INIT         7

/* One event's result (hpm-rs). */
typedef struct {
    char      *name;        /* perf event name ("cycles", "task-clock", ...) */
    long long  raw;         /* raw count while the group ran */
    double     value;       /* count scaled to the enabled time; NaN: not counted */
    double     running;     /* fraction of the enabled time the group ran (1: all) */
} hpm_event_info;

typedef struct {
    int             num_data;
    hpm_event_info *data;
    double          times[HPM_NTIM];
    int             is_mplex_cont;
    int             is_rusage;
    int             mpi_task_id;
    int             instr_id;
    int             count;
    int             is_exclusive;
    int             xml_element_id;
    char           *description;
    char           *xml_descr;
} hpm_data_item;

typedef hpm_data_item *hpm_event_vector;

#endif
