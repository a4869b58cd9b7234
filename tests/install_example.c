// A program that uses an installed convbench: cc example.c $(pkg-config --cflags --libs convbench)
#include <convbench.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    cb_error err = {0};
    cb_net *net = cb_net_load("fashion-lenet", &err); // a built-in network, found wherever we run
    if (!net || cb_net_set_batch(net, 2, &err) != CB_OK) return fprintf(stderr, "%s\n", err.msg), 2;
    cb_exec_opts o;
    cb_exec_opts_default(&o); // the CPU backend, fp32
    cb_exec *e = cb_exec_create(net, &o, &err);
    if (!e) return fprintf(stderr, "%s\n", err.msg), 2;
    float x[2 * 28 * 28] = {0}, p[2 * 10];
    cb_exec_set_input(e, x, NULL);
    cb_exec_forward(e, false, NULL);
    cb_exec_get_output(e, p, 2 * 10);
    double sum = 0;
    for (int i = 0; i < 10; i++) sum += p[i];
    printf("convbench %s (header %s): %s, %d layers, sum of p = %.4f, OMP_WAIT_POLICY=%s\n", cb_version(),
           CONVBENCH_VERSION, net->name, net->nlayers, sum, getenv("OMP_WAIT_POLICY"));
    cb_exec_destroy(e);
    cb_net_free(net);
    return 0;
}
