__global__ void k(int* a, int n) {
//@gi begin
  int i = threadIdx.x;
  for (int j = 0; j < n; j++) {
    a[i] += j;
  }
  if (i < n) a[i] = 0;
//@gi end
}
