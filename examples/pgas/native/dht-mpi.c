/*
 * A distributed hash table in C with MPI-3 one-sided communication: the counterpart of
 * examples/pgas/dht.mjs's `atomic` implementation, with the same table layout, hashes and key
 * stream, for comparing figures.
 *
 * Every rank's part of the table is a window of 2^(logK+1) slots of (key, value) int32 pairs,
 * open addressing with linear probing within the owner's part. An insert claims a slot with
 * MPI_Compare_and_swap on its key word (0: empty; flushed, as the outcome decides what comes
 * next) and puts the value beside it with MPI_Put (completed by the next flush). A lookup gets
 * four slots from the key's home slot on, 64 lookups in flight (MPI_Get, then MPI_Win_flush_all),
 * and the rare longer probe one get at a time. All in one passive-target epoch (MPI_Win_lock_all).
 * Every rank inserts 2^logK keys, then looks up the next rank's keys; then the same check as
 * dht.mjs: a sample of every rank's keys and keys never inserted looked up through the table,
 * every entry of the own part, and the entries summed over ranks equal to the distinct keys.
 *
 * Build: mpicc -O2 -o dht-mpi dht-mpi.c
 * Run:   mpirun -np 2 ./dht-mpi [logKeysPerTask]      (default 16)
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 64
#define GROUP 4
#define SAMPLE 64
#define SEED 0x2545f491u

static int P, me;
static uint32_t range, slots, smask, nPer;
static int32_t *T;                        /* my part: slots (key, value) pairs */
static MPI_Win win;

/* MurmurHash3's 32-bit finaliser. */
static uint32_t mix (uint32_t h) {
  h ^= h >> 16; h *= 0x85ebca6bu;
  h ^= h >> 13; h *= 0xc2b2ae35u;
  return h ^ (h >> 16);
}
static int32_t value_of (int32_t key) { return (int32_t)mix((uint32_t)key ^ 0x5bd1e995u); }
static int32_t key_at (uint32_t g) { return (int32_t)(2 * (mix(g ^ SEED) % range) + 1); }
static int32_t absent_at (uint32_t g) { return (int32_t)(2 * (mix(g ^ ~SEED) % range) + 2); }
static int owner_of (uint32_t h) { return (int)(h % (uint32_t)P); }
static uint32_t home_of (uint32_t h) { return (h / (uint32_t)P) & smask; }

static void *xalloc (size_t n) {
  void *p = calloc(n > 0 ? n : 1, 1);
  if (p == NULL) { fprintf(stderr, "dht-mpi: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
  return p;
}

/* Inserts keys key_at(g0) .. key_at(g0 + n - 1); vbuf holds each insert's value until the flush. */
static void insert_all (uint32_t g0, uint32_t n, int32_t *vbuf) {
  const int32_t zero = 0;
  for (uint32_t i = 0; i < n; i++) {
    int32_t key = key_at(g0 + i), old;
    uint32_t h = mix((uint32_t)key), s = home_of(h), m = 0;
    int d = owner_of(h);
    for (;; s = (s + 1) & smask) {
      if (++m > slots) { fprintf(stderr, "dht-mpi: rank %d's part is full\n", d); MPI_Abort(MPI_COMM_WORLD, 1); }
      MPI_Compare_and_swap(&key, &zero, &old, MPI_INT32_T, d, 2 * (MPI_Aint)s, win);
      MPI_Win_flush(d, win);
      if (old == 0 || old == key) break;
    }
    vbuf[i] = value_of(key);
    MPI_Put(&vbuf[i], 1, MPI_INT32_T, d, 2 * (MPI_Aint)s + 1, 1, MPI_INT32_T, win);
  }
  MPI_Win_flush_all(win);
}

/* Looks every key of keys[0..n) up: vals and found (1 or 0). */
static void lookup_all (const int32_t *keys, uint32_t n, int32_t *vals, uint8_t *found) {
  static int32_t got[WINDOW][2 * GROUP];
  for (uint32_t i0 = 0; i0 < n; i0 += WINDOW) {
    uint32_t w, k = n - i0 < WINDOW ? n - i0 : WINDOW;
    for (w = 0; w < k; w++) {
      uint32_t h = mix((uint32_t)keys[i0 + w]), s = home_of(h);
      uint32_t c = slots - s < GROUP ? slots - s : GROUP;
      MPI_Get(got[w], 2 * (int)c, MPI_INT32_T, owner_of(h), 2 * (MPI_Aint)s, 2 * (int)c, MPI_INT32_T, win);
    }
    MPI_Win_flush_all(win);
    for (w = 0; w < k; w++) {
      int32_t key = keys[i0 + w];
      uint32_t h = mix((uint32_t)key), s = home_of(h), m = 0;
      int d = owner_of(h);
      for (;;) {
        uint32_t j = 0, c = slots - s < GROUP ? slots - s : GROUP;
        while (j < c && got[w][2 * j] != key && got[w][2 * j] != 0) j++;
        if (j < c) {
          int hit = got[w][2 * j] == key;
          vals[i0 + w] = hit ? got[w][2 * j + 1] : 0; found[i0 + w] = (uint8_t)hit;
          break;
        }
        m += c; s = (s + c) & smask;
        if (m >= slots) { vals[i0 + w] = 0; found[i0 + w] = 0; break; }
        c = slots - s < GROUP ? slots - s : GROUP;
        MPI_Get(got[w], 2 * (int)c, MPI_INT32_T, d, 2 * (MPI_Aint)s, 2 * (int)c, MPI_INT32_T, win);
        MPI_Win_flush(d, win);
      }
    }
  }
}

/* My part, directly: the value of `key`, or 0 with *hit = 0. */
static int32_t lookup_local (int32_t key, int *hit) {
  for (uint32_t s = home_of(mix((uint32_t)key)), n = 0; n < slots; n++, s = (s + 1) & smask) {
    if (T[2 * s] == key) { *hit = 1; return T[2 * s + 1]; }
    if (T[2 * s] == 0) break;
  }
  *hit = 0;
  return 0;
}

static int cmp_int32 (const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

int main (int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int logK = argc > 1 ? atoi(argv[1]) : 16;
  if (logK < 0 || logK > 24 || ((uint64_t)P << logK) > (1u << 28)) {
    if (me == 0) fprintf(stderr, "dht-mpi: logKeysPerTask must be 0..24, and ranks x 2^logK at most 2^28\n");
    MPI_Finalize();
    return 2;
  }
  nPer = 1u << logK;
  range = 4u * (uint32_t)P * nPer;
  slots = 2u * nPer;
  smask = slots - 1;

  MPI_Win_allocate((MPI_Aint)slots * 8, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &T, &win);
  for (uint32_t s = 0; s < 2 * slots; s++) T[s] = 0;
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);

  int32_t *vbuf = xalloc(sizeof(int32_t) * nPer);
  int32_t *keys = xalloc(sizeof(int32_t) * nPer);
  int32_t *vals = xalloc(sizeof(int32_t) * nPer);
  uint8_t *found = xalloc(nPer);
  double time[2], t0;

  /* the timed phases: every rank inserts its keys, then looks up the next rank's */
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  insert_all((uint32_t)me * nPer, nPer, vbuf);
  MPI_Win_sync(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_sync(win);
  time[0] = MPI_Wtime() - t0;

  int next = (me + 1) % P;
  for (uint32_t i = 0; i < nPer; i++) keys[i] = key_at((uint32_t)next * nPer + i);
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  lookup_all(keys, nPer, vals, found);
  MPI_Barrier(MPI_COMM_WORLD);
  time[1] = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, time, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

  /* the check (untimed), against the key stream */
  double bad = 0;
  for (uint32_t i = 0; i < nPer; i++) {
    if (found[i] != 1 || vals[i] != value_of(keys[i])) {
      if (bad++ < 5) printf("dht-mpi: rank %d: key %d of rank %d %s\n", me, keys[i], next, found[i] ? "has a wrong value" : "not found");
    }
  }
  uint32_t m = nPer < SAMPLE ? nPer : SAMPLE, ns = 0;
  int32_t *sk = xalloc(sizeof(int32_t) * 2 * SAMPLE * (size_t)P);
  int32_t *sv = xalloc(sizeof(int32_t) * 2 * SAMPLE * (size_t)P);
  uint8_t *sf = xalloc(2 * SAMPLE * (size_t)P);
  for (uint32_t t = 0; t < (uint32_t)P; t++) {
    for (uint32_t k = 0; k < m; k++) sk[ns++] = key_at(t * nPer + (k * 0x9e3779b1u + (uint32_t)me) % nPer);
    for (uint32_t k = 0; k < m; k++) sk[ns++] = absent_at((uint32_t)me * SAMPLE * P + t * SAMPLE + k);
  }
  lookup_all(sk, ns, sv, sf);
  for (uint32_t i = 0; i < ns; i++) {
    int present = (sk[i] & 1) == 1;
    if ((present && (sf[i] != 1 || sv[i] != value_of(sk[i]))) || (!present && sf[i] != 0)) {
      if (bad++ < 5) printf("dht-mpi: rank %d: sampled key %d wrong\n", me, sk[i]);
    }
  }
  /* my part against the whole stream */
  size_t nmine = 0, cap = 2 * (size_t)nPer + 16;
  int32_t *mine = xalloc(sizeof(int32_t) * cap);
  for (uint32_t g = 0; g < (uint32_t)P * nPer; g++) {
    int32_t key = key_at(g);
    if (owner_of(mix((uint32_t)key)) != me) continue;
    if (nmine == cap) {
      cap *= 2;
      mine = realloc(mine, sizeof(int32_t) * cap);
      if (mine == NULL) { fprintf(stderr, "dht-mpi: out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    }
    mine[nmine++] = key;
  }
  qsort(mine, nmine, sizeof(int32_t), cmp_int32);
  double distinct = 0, entries = 0;
  for (size_t i = 0; i < nmine; i++) {
    if (i > 0 && mine[i] == mine[i - 1]) continue;
    distinct++;
    int hit;
    int32_t v = lookup_local(mine[i], &hit);
    if (!hit || v != value_of(mine[i])) {
      if (bad++ < 5) printf("dht-mpi: rank %d: own key %d %s\n", me, mine[i], hit ? "has a wrong value" : "is missing");
    }
  }
  for (uint32_t s = 0; s < slots; s++) if (T[2 * s] != 0) entries++;
  double sums[4] = { entries, distinct, bad, (double)ns };
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int ok = sums[2] == 0 && sums[0] == sums[1];

  if (me == 0) {
    double total = (double)P * nPer;
    printf("DHT (C, MPI one-sided): remote atomics, puts and gets, %d rank(s)\n", P);
    printf("Keys inserted     = %.0f (2^%d per rank), %.0f distinct\n", total, logK, sums[1]);
    printf("Table             = 2^%d slots per rank, load %.3f\n", logK + 1, sums[0] / ((double)P * slots));
    printf("Insert time       = %.4f seconds: %.4f million inserts per second (total)\n", time[0], total / time[0] / 1e6);
    printf("Lookup time       = %.4f seconds: %.4f million lookups per second (total)\n", time[1], total / time[1] / 1e6);
    printf("Entries           = %.0f (%s); sampled lookups %.0f; errors %.0f\n", sums[0],
      sums[0] == sums[1] ? "the distinct keys" : "not the distinct keys", sums[3], sums[2]);
    printf(ok ? "DHT 2^%d atomic verified\n" : "DHT 2^%d atomic verification FAILED\n", logK);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  free(vbuf); free(keys); free(vals); free(found); free(sk); free(sv); free(sf); free(mine);
  MPI_Finalize();
  return ok ? 0 : 1;
}
