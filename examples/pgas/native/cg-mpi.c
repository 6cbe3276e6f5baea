/*
 * NAS Parallel Benchmarks CG, classes S, W and A, in C with MPI: the counterpart of
 * examples/pgas/cg.mjs, with the same algorithm and distribution, for comparing figures.
 *
 * The matrix is NPB-MPI's (makea and sparse of NPB 3.3's cg.f: generator randlc, seed
 * 314159265, multiplier 5^13; each row's triples summed in the order they are made, the
 * diagonal's rcond - shift last, columns in the order they first appear). Rows and vector
 * elements are in blocks of ceil(na / P) per rank; the product A.p gathers p with
 * MPI_Allgatherv, dot products use MPI_Allreduce. Verification: NPB 3.3's zeta values, relative
 * error at most 1e-10; the operation count for Mop/s is NPB's.
 *
 * Build: mpicc -O2 -o cg-mpi cg-mpi.c -lm
 * Run:   mpirun -np 2 ./cg-mpi A
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RCOND 0.1
#define CGITMAX 25
#define EPSILON 1e-10
#define SEED 314159265.0
#define MULTIPLIER 1220703125.0

struct cls { char name; int na, nonzer, niter; double shift, zeta; };
/* na, nonzer, niter, shift and the verification value of zeta (NPB 3.3 cg.f). */
static const struct cls CLASSES[] = {
  { 'S', 1400, 7, 15, 10.0, 8.5971775078648 },
  { 'W', 7000, 8, 15, 12.0, 10.362595087124 },
  { 'A', 14000, 11, 15, 20.0, 17.130235054029 },
};

/* randlc without the final scaling: x.a mod 2^46 by the 2^23 splitting, exact in doubles. */
static double mulmod46 (double x, double a) {
  const double r23 = 1.0 / 8388608.0, t23 = 8388608.0;
  const double r46 = r23 * r23, t46 = t23 * t23;
  double a1 = (double)(long long)(r23 * a), a2 = a - t23 * a1;
  double x1 = (double)(long long)(r23 * x), x2 = x - t23 * x1;
  double t1 = a1 * x2 + a2 * x1;
  double z = t1 - t23 * (double)(long long)(r23 * t1);
  double t3 = t23 * z + a2 * x2;
  return t3 - t46 * (double)(long long)(r46 * t3);
}

static void *xalloc (size_t n) {
  void *p = calloc(n > 0 ? n : 1, 1);
  if (p == NULL) { fprintf(stderr, "cg-mpi: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
  return p;
}

/* makea and sparse for rows lo .. hi - 1 (0-based), all columns: compressed rows. */
static void makea (int n, int nonzer, double shift, int lo, int hi, int **rowstr_out, int **colidx_out, double **a_out) {
  const double r46 = 1.0 / 70368744177664.0;
  double tran = mulmod46(SEED, MULTIPLIER); /* NPB's first randlc (its value unused) */
  int nn1 = 1;
  do nn1 *= 2; while (nn1 < n);

  /* the n sparse vectors (sprnvc, then vecset: 0.5 at place i) */
  int w = nonzer + 1;
  int *vcol = xalloc(sizeof(int) * (size_t)n * w);
  double *vval = xalloc(sizeof(double) * (size_t)n * w);
  int *vlen = xalloc(sizeof(int) * n);
  unsigned char *seen = xalloc(n);
  for (int i = 0; i < n; i++) {
    int base = i * w, nzv = 0;
    while (nzv < nonzer) {
      tran = mulmod46(tran, MULTIPLIER); double vecelt = r46 * tran;
      tran = mulmod46(tran, MULTIPLIER); double vecloc = r46 * tran;
      int place = (int)(nn1 * vecloc);
      if (place >= n || seen[place]) continue;
      seen[place] = 1;
      vcol[base + nzv] = place; vval[base + nzv] = vecelt; nzv++;
    }
    for (int k = 0; k < nzv; k++) seen[vcol[base + k]] = 0;
    int set = 0;
    for (int k = 0; k < nzv; k++) if (vcol[base + k] == i) { vval[base + k] = 0.5; set = 1; }
    if (!set) { vcol[base + nzv] = i; vval[base + nzv] = 0.5; nzv++; }
    vlen[i] = nzv;
  }

  /* triples per local row, the diagonal one more */
  int nrows = hi - lo;
  int *rowstr = xalloc(sizeof(int) * (nrows + 1));
  for (int i = 0; i < n; i++)
    for (int k = i * w, e = k + vlen[i]; k < e; k++)
      if (vcol[k] >= lo && vcol[k] < hi) rowstr[vcol[k] - lo + 1] += vlen[i];
  for (int j = 0; j < nrows; j++) rowstr[j + 1] += rowstr[j] + 1;
  int nnza = rowstr[nrows];

  /* the triples bucketed by row in the order makea makes them, the diagonal last */
  double *a = xalloc(sizeof(double) * nnza);
  int *colidx = xalloc(sizeof(int) * nnza);
  int *next = xalloc(sizeof(int) * (nrows + 1));
  memcpy(next, rowstr, sizeof(int) * nrows);
  double ratio = pow(RCOND, 1.0 / n), size = 1.0;
  for (int i = 0; i < n; i++) {
    int base = i * w, len = vlen[i];
    for (int c = 0; c < len; c++) {
      int jcol = vcol[base + c];
      double scale = size * vval[base + c];
      for (int r = 0; r < len; r++) {
        int irow = vcol[base + r];
        if (irow < lo || irow >= hi) continue;
        int k = next[irow - lo]++;
        a[k] = vval[base + r] * scale; colidx[k] = jcol;
      }
    }
    size *= ratio;
  }
  for (int j = 0; j < nrows; j++) { int k = next[j]++; a[k] = RCOND - shift; colidx[k] = lo + j; }

  /* sparse: duplicates summed, columns in order of first nonzero, zeros dropped */
  double *x = xalloc(sizeof(double) * n);
  unsigned char *mark = xalloc(n);
  int *nzloc = xalloc(sizeof(int) * n);
  int nza = 0, start = 0;
  for (int j = 0; j < nrows; j++) {
    int end = rowstr[j + 1], nzrow = 0;
    for (int k = start; k < end; k++) {
      int i = colidx[k];
      x[i] = x[i] + a[k];
      if (!mark[i] && x[i] != 0.0) { mark[i] = 1; nzloc[nzrow++] = i; }
    }
    for (int k = 0; k < nzrow; k++) {
      int i = nzloc[k];
      mark[i] = 0;
      double xi = x[i];
      x[i] = 0.0;
      if (xi != 0.0) { a[nza] = xi; colidx[nza] = i; nza++; }
    }
    start = end;
    rowstr[j + 1] = nza;
  }
  free(vcol); free(vval); free(vlen); free(seen); free(next); free(x); free(mark); free(nzloc);
  *rowstr_out = rowstr; *colidx_out = colidx; *a_out = a;
}

static void matvec (const int *rowstr, const int *colidx, const double *a, const double *v, double *out, int nrows) {
  for (int j = 0; j < nrows; j++) {
    double sum = 0.0;
    for (int k = rowstr[j]; k < rowstr[j + 1]; k++) sum += a[k] * v[colidx[k]];
    out[j] = sum;
  }
}

static double dot (const double *u, const double *v, int n) {
  double sum = 0.0;
  for (int j = 0; j < n; j++) sum += u[j] * v[j];
  return sum;
}

static double all_sum (double v) {
  double s;
  MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

int main (int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char name = argc > 1 ? argv[1][0] : 'S';
  if (name >= 'a' && name <= 'z') name -= 'a' - 'A';
  const struct cls *C = NULL;
  for (size_t i = 0; i < sizeof(CLASSES) / sizeof(CLASSES[0]); i++) if (CLASSES[i].name == name) C = &CLASSES[i];
  if (C == NULL || P > C->na) {
    if (me == 0) fprintf(stderr, C == NULL ? "CG: unknown class (S, W or A)\n" : "CG: more ranks than rows\n");
    MPI_Finalize();
    return 2;
  }
  int na = C->na, nonzer = C->nonzer, niter = C->niter;
  double shift = C->shift;

  /* this rank's rows: a block of ceil(na / P) */
  int B = (na + P - 1) / P;
  int lo = me * B < na ? me * B : na, hi = lo + B < na ? lo + B : na, nrows = hi - lo;
  int *counts = xalloc(sizeof(int) * P), *displs = xalloc(sizeof(int) * P);
  for (int t = 0; t < P; t++) {
    int l = t * B < na ? t * B : na, h = l + B < na ? l + B : na;
    counts[t] = h - l; displs[t] = l;
  }

  int *rowstr, *colidx;
  double *a;
  double t0 = MPI_Wtime();
  makea(na, nonzer, shift, lo, hi, &rowstr, &colidx, &a);
  double setup = MPI_Wtime() - t0;

  double *x = xalloc(sizeof(double) * (B + 1)), *z = xalloc(sizeof(double) * (B + 1));
  double *p = xalloc(sizeof(double) * (B + 1)), *q = xalloc(sizeof(double) * (B + 1));
  double *r = xalloc(sizeof(double) * (B + 1)), *full = xalloc(sizeof(double) * (na + 1));

  if (me == 0) {
    printf("\n NAS Parallel Benchmarks (NPB 3.3 definition) -- CG Benchmark, C + MPI\n\n");
    printf(" Size: %10d\n Iterations: %5d\n Number of ranks: %5d\n", na, niter, P);
    printf(" Number of nonzeroes per row: %8d\n Eigenvalue shift: %.3e\n", nonzer, shift);
    printf(" Initialization time: %.3f seconds\n", setup);
  }

  double zeta = 0.0;
  for (int j = 0; j < nrows; j++) x[j] = 1.0;
  for (int it = 0; it <= niter; it++) {          /* it 0: the untimed iteration */
    if (it == 1) {
      for (int j = 0; j < nrows; j++) x[j] = 1.0;
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
    }
    /* conj_grad */
    for (int j = 0; j < nrows; j++) { q[j] = 0.0; z[j] = 0.0; r[j] = x[j]; p[j] = r[j]; }
    double rho = all_sum(dot(r, r, nrows));
    for (int cgit = 0; cgit < CGITMAX; cgit++) {
      MPI_Allgatherv(p, nrows, MPI_DOUBLE, full, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
      matvec(rowstr, colidx, a, full, q, nrows);
      double d = all_sum(dot(p, q, nrows));
      double alpha = rho / d, rho0 = rho;
      for (int j = 0; j < nrows; j++) { z[j] = z[j] + alpha * p[j]; r[j] = r[j] - alpha * q[j]; }
      rho = all_sum(dot(r, r, nrows));
      double beta = rho / rho0;
      for (int j = 0; j < nrows; j++) p[j] = r[j] + beta * p[j];
    }
    MPI_Allgatherv(z, nrows, MPI_DOUBLE, full, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    matvec(rowstr, colidx, a, full, r, nrows);
    double sum = 0.0;
    for (int j = 0; j < nrows; j++) { double d = x[j] - r[j]; sum += d * d; }
    double rnorm = sqrt(all_sum(sum));
    /* zeta = shift + 1/(x.z), x = z/||z|| */
    double nt[2] = { dot(x, z, nrows), dot(z, z, nrows) }, ns[2];
    MPI_Allreduce(nt, ns, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double norm = 1.0 / sqrt(ns[1]);
    for (int j = 0; j < nrows; j++) x[j] = norm * z[j];
    if (it > 0) {
      zeta = shift + 1.0 / ns[0];
      if (me == 0) {
        if (it == 1) printf("\n   iteration           ||r||                 zeta\n");
        printf("    %5d       %20.13e%20.13f\n", it, rnorm, zeta);
      }
    }
  }
  double t = MPI_Wtime() - t0, tmax;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  double err = fabs(zeta - C->zeta) / C->zeta;
  int pass = err <= EPSILON, passed;
  MPI_Allreduce(&pass, &passed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int ok = passed == P;
  if (me == 0) {
    double mops = 2.0 * niter * na * (3.0 + nonzer * (nonzer + 1) + 25.0 * (5.0 + nonzer * (nonzer + 1)) + 3.0) / tmax / 1e6;
    printf("\n CG Benchmark Completed\n");
    printf(" Class           = %24c\n Size            = %24d\n Iterations      = %24d\n", name, na, niter);
    printf(" Ranks           = %24d\n Time in seconds = %24.2f\n Mop/s total     = %24.2f\n", P, tmax, mops);
    printf(" Zeta            = %24.13e\n Error           = %24.3e\n", zeta, err);
    printf(" Verification    = %24s\n", ok ? "SUCCESSFUL" : "UNSUCCESSFUL");
    if (ok) printf("CG class %c verified\n", name);
    else printf("CG class %c verification FAILED: zeta %.15g (NPB: %.15g)\n", name, zeta, C->zeta);
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
