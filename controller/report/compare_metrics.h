/* SPDX-License-Identifier: Apache-2.0 */
/* compare_metrics.h - the metrics `kperf compare` judges and their thresholds: every number a
 * CNI change can move (latency p50/p90/p99/p99.9/mean, op/s, conn/s, Mb/s, retransmits per GB,
 * UDP loss and jitter, node and agent CPU per Gbit/s, the latency increase under load and
 * the load's Mb/s), each with its direction, its threshold
 * group and how to read it from a sample. Also parses thresholds ("latency=5%,loss=0.1pp",
 * or a YAML mapping). The table of metrics and defaults is in docs/compare.md.
 * Owns the static metric table; reads samples through report_pack.h. */
#ifndef KPERF_REPORT_COMPARE_METRICS_H
#define KPERF_REPORT_COMPARE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/kp_err.h"

struct kp_err;

/* Threshold groups: one threshold each, named as in --threshold NAME=VALUE. */
enum cmp_group {
    CMP_LATENCY,     /* p50, p90, p99, mean */
    CMP_P999,        /* p99.9: the top 0.1%, a few transactions per sample, noisier */
    CMP_OPS,         /* op/s of TCP_RR, UDP_RR */
    CMP_CONN,        /* conn/s of TCP_CRR */
    CMP_THROUGHPUT,  /* Mb/s */
    CMP_RETRANSMITS, /* TCP retransmits per GB received */
    CMP_LOSS,        /* UDP loss, percent */
    CMP_JITTER,      /* UDP jitter, microseconds */
    CMP_NODE_CPU,    /* softirq + system percent of both nodes per Gbit/s */
    CMP_AGENT_CPU,   /* agent CPU seconds per Gbit */
    CMP_LOAD,        /* latency increase under load (TCP_RR_LOADED vs idle TCP_RR), us */
    CMP_READINESS,   /* pod network readiness segments, seconds (readiness.h; not a row metric) */
    CMP_GROUPS
};

/* A threshold: relative (percent of BASE) or absolute (in the metric's unit; "pp" for
 * percentages, which is the same thing for loss). */
struct cmp_threshold {
    double value;
    bool absolute;
};

struct cmp_metric {
    const char *name;  /* "p99.9", "retrans/GB" */
    const char *field; /* what it is made of, for the JSON: "latency_us.p999" */
    enum cmp_group group;
    bool higher_is_better;
    bool key;              /* a key metric: the in-run spread of one sample stands for it */
    const char *agg_field; /* read from row.aggregate when set (merged-histogram percentiles, */
    const char *agg_sub;   /* the report's medians), else the median of the sample values */
    /* The value of one sample of row; false when it does not carry it. */
    bool (*sample_value)(const json_t *row, const json_t *sample, double *out);
    /* A rate of events among trials (DNS lookups lost or late of those sent): the events and
     * trials of one sample, false when it has none. Set, the judge compares the two rows'
     * summed counts (two-proportion test), which one sample each is enough for. */
    bool (*sample_counts)(const json_t *sample, double *events, double *trials);
};

/* The table, *count set. */
const struct cmp_metric *cmp_metrics(size_t *count);

const char *cmp_group_name(enum cmp_group g);

/* The default thresholds (table in docs/compare.md). */
void cmp_thresholds_default(struct cmp_threshold th[CMP_GROUPS]);

/* Applies "latency=5%,loss=0.1pp,retransmits=2" (a bare "5%" sets every relative threshold).
 * Values: "N%" relative, "Npp" or "N" absolute. Returns 0 or -1 with a one-line err. */
KP_MUST_CHECK int cmp_thresholds_parse(const char *spec, struct cmp_threshold th[CMP_GROUPS],
                                       struct kp_err *err);

/* Applies a YAML file: a mapping of group name to value ("latency: 5%", "loss: 0.1pp"), as
 * above; unknown names are refused. Returns 0 or -1 with err. */
KP_MUST_CHECK int cmp_thresholds_load(const char *path, struct cmp_threshold th[CMP_GROUPS],
                                      struct kp_err *err);

/* "5%", "0.1pp" or "2" into buf; returns buf. */
const char *cmp_threshold_text(const struct cmp_threshold *t, enum cmp_group g, char *buf,
                               size_t len);

/* Values of metric m over row.samples[] (allocated, caller frees; NULL when 0). */
size_t cmp_sample_values(const json_t *row, const struct cmp_metric *m, double **out);

/* The row's value of m: aggregate field, or the median of its samples. False when absent. */
bool cmp_row_value(const json_t *row, const struct cmp_metric *m, double *out);

#endif
