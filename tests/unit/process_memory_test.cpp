#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/process_memory.hpp"

using namespace strata;

// AddressSanitizer (make test-asan; the asan.process_memory test) replaces glibc's allocator:
// mallopt refuses, so keep_freed_memory() applies nothing and says why, and the heap's behaviour
// tested below is glibc's, not the sanitizer's.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcAllocator = false;
#else
constexpr bool kGlibcAllocator = true;
#endif

// The declining cases first: they leave the allocator as it is.
TEST(ProcessMemory, StrataKeepFreedMemoryZeroLeavesTheAllocator) {
  setenv("STRATA_KEEP_FREED_MEMORY", "0", 1);
  const AllocatorSettings s = keep_freed_memory();
  unsetenv("STRATA_KEEP_FREED_MEMORY");
  EXPECT_FALSE(s.applied);
  EXPECT_EQ(s.glibc_tunables(), "");
  EXPECT_NE(s.describe().find("STRATA_KEEP_FREED_MEMORY=0"), std::string::npos) << s.describe();
}

TEST(ProcessMemory, TheUsersMallocSettingsWin) {
  for (const char* var : {"MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"}) {
    setenv(var, "1048576", 1);
    const AllocatorSettings s = keep_freed_memory();
    unsetenv(var);
    EXPECT_FALSE(s.applied) << var;
    EXPECT_NE(s.reason.find("user"), std::string::npos) << s.reason;
  }
  setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1048576", 1);
  EXPECT_FALSE(keep_freed_memory().applied);
  // Tunables of something else than malloc are not the allocator's.
  setenv("GLIBC_TUNABLES", "glibc.rtld.nns=4", 1);
  const AllocatorSettings other = keep_freed_memory();
  unsetenv("GLIBC_TUNABLES");
  if (kGlibcAllocator) {
    EXPECT_TRUE(other.applied);
  } else {
    EXPECT_FALSE(other.applied);
    EXPECT_EQ(other.reason, "mallopt refused the thresholds");
  }
}

// What the setting is for: a buffer of a few MiB, freed, stays in the process (no page faults
// for the next one), where glibc's defaults would have mapped it and unmapped it at free.
TEST(ProcessMemory, FreedBuffersStayInTheProcess) {
  if (!kGlibcAllocator) GTEST_SKIP() << "the sanitizer's allocator, not glibc's: nothing to keep";
  const AllocatorSettings s = keep_freed_memory();
  ASSERT_TRUE(s.applied) << s.describe();
  EXPECT_EQ(s.glibc_tunables(), "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432");
  constexpr size_t kBytes = size_t{8} << 20;
  const struct mallinfo2 before = mallinfo2();
  auto* p = static_cast<char*>(std::malloc(kBytes));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, kBytes);
  const struct mallinfo2 held = mallinfo2();
  EXPECT_EQ(held.hblkhd, before.hblkhd) << "an 8 MiB buffer was mapped, not taken from the heap";
  std::free(p);
  const struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, kBytes) << "the freed 8 MiB went back to the kernel";
  EXPECT_GE(after.arena, held.arena) << "the heap was trimmed";
}
