/*
 * Open MPI's own all-reduce, the peer bench/allreduce.ts prints beside ringtorch and gloo.
 * Built and run by it: mpicc -O2 -o allreduce allreduce.c && mpirun -np 2 ./allreduce [MB ...]
 * Measured as bench/torch/ddp.py measures gloo: float32 sums of 1, 16 and 64 MB, 3 warm-up calls,
 * 7 rounds of max(3, 64/MB) calls, each round's mean; prints min and median per size.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, world;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int sizes[16] = {1, 16, 64};
  int count = 3;
  if (argc > 1) {
    count = argc - 1 < 16 ? argc - 1 : 16;
    for (int s = 0; s < count; s++) sizes[s] = atoi(argv[s + 1]);
  }
  for (int s = 0; s < count; s++) {
    int mb = sizes[s];
    long n = (long)mb * (1 << 20) / 4;
    float* buf = malloc(n * sizeof(float));
    for (long i = 0; i < n; i++) buf[i] = 1.0f;
    for (int i = 0; i < 3; i++) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double times[7];
    int reps = 64 / mb > 3 ? 64 / mb : 3;
    for (int r = 0; r < 7; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < reps; i++) MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      times[r] = (MPI_Wtime() - t0) * 1000.0 / reps;
    }
    float check = (float)(rank + 1);
    MPI_Allreduce(MPI_IN_PLACE, &check, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (check != world * (world + 1) / 2.0f) {
      fprintf(stderr, "all-reduce gave %f\n", check);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    qsort(times, 7, sizeof(double), cmp);
    if (rank == 0) printf("allreduce %dMB: time ms min=%.3f median=%.3f\n", mb, times[0], times[3]);
    free(buf);
  }
  MPI_Finalize();
  return 0;
}
