// The pipeline's plumbing: the task pool (every chunk once, exceptions rethrown, nested loops) and
// the ordered queue between the map lanes and the format stage (batches back in input order).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "evk/task_pool.hpp"
#include "io/queue.hpp"

namespace bc = evk::barracuda_exact;

TEST(BarracudaPipeline, TaskPoolRunsEveryChunkOnceAndRethrows) {
  for (int workers : {0, 1, 3}) {
    evk::TaskPool pool(workers);
    std::vector<std::atomic<int>> hits(10007);
    pool.parallel_for(hits.size(), 64, [&](std::size_t b, std::size_t e) {
      EXPECT_LE(e - b, 64u);
      for (std::size_t i = b; i < e; ++i) ++hits[i];
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    EXPECT_THROW(pool.parallel_for(1000, 10, [](std::size_t b, std::size_t) {
      if (b == 500) throw std::runtime_error("chunk 50");
    }), std::runtime_error);
    // nested loops from a worker do not deadlock (the caller works on its own loop)
    std::atomic<int> n{0};
    pool.parallel_for(8, 1, [&](std::size_t, std::size_t) { pool.parallel_for(100, 7, [&](std::size_t b, std::size_t e) { n += static_cast<int>(e - b); }); });
    EXPECT_EQ(n.load(), 800);
  }
}

TEST(BarracudaPipeline, OrderedQueueHandsOutInSequence) {
  bc::OrderedQueue<int> q(4);
  std::thread producer([&] {
    for (int s : {2, 0, 3, 1, 5, 4, 6}) ASSERT_TRUE(q.push(static_cast<std::uint64_t>(s), s * 10));
    q.finish();
  });
  std::vector<int> got;
  while (auto v = q.pop()) got.push_back(*v);
  producer.join();
  EXPECT_EQ(got, (std::vector<int>{0, 10, 20, 30, 40, 50, 60}));
}
