/* A stand-alone driver of the C harness, for the sanitizer and valgrind runs of
 * ffi-tests/sanitize.sh (cargo test links the harness into a Rust test binary
 * instead, see ffi-tests/build.rs). Built with the entry points renamed as in
 * the C99 build: -DHARNESS_ENTRY=mvnmf_harness_c etc.
 *
 * Arguments: the parts to run (basic, models, graph, protocol, regress, jsnmf, mvel, linalg, where); none: all.
 * Exit status 0 when every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mvnmf_harness_c(int verbose);
int mvnmf_harness_models_c(int verbose);
int mvnmf_harness_graph_c(int verbose);
int mvnmf_harness_protocol_c(int verbose);
int mvnmf_harness_regress_c(int verbose);
int mvnmf_harness_jsnmf_c(int verbose);
int mvnmf_harness_mvel_c(int verbose);
int mvnmf_harness_linalg_c(int verbose);
int mvnmf_harness_twins_c(int verbose);
int mvnmf_harness_where_c(int verbose);
int mvnmf_harness_dist_c(int verbose);

static int wanted(int argc, char **argv, const char *part)
{
    int i;
    if (argc < 2)
        return 1;
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], part) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    int verbose = getenv("MVNMF_HARNESS_VERBOSE") != NULL;
    int failures = 0;
    if (wanted(argc, argv, "basic"))
        failures += mvnmf_harness_c(verbose);
    if (wanted(argc, argv, "models"))
        failures += mvnmf_harness_models_c(verbose);
    if (wanted(argc, argv, "graph"))
        failures += mvnmf_harness_graph_c(verbose);
    if (wanted(argc, argv, "protocol"))
        failures += mvnmf_harness_protocol_c(verbose);
    if (wanted(argc, argv, "regress"))
        failures += mvnmf_harness_regress_c(verbose);
    if (wanted(argc, argv, "jsnmf"))
        failures += mvnmf_harness_jsnmf_c(verbose);
    if (wanted(argc, argv, "mvel"))
        failures += mvnmf_harness_mvel_c(verbose);
    if (wanted(argc, argv, "linalg"))
        failures += mvnmf_harness_linalg_c(verbose);
    if (wanted(argc, argv, "twins"))
        failures += mvnmf_harness_twins_c(verbose);
    if (wanted(argc, argv, "where"))
        failures += mvnmf_harness_where_c(verbose);
    if (wanted(argc, argv, "dist"))
        failures += mvnmf_harness_dist_c(verbose);
    printf("mvnmf C harness: %d failed checks\n", failures);
    return failures == 0 ? 0 : 1;
}
