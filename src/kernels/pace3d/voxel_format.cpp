#include "kernels/pace3d/voxel_format.hpp"

#include <bit>
#include <cstring>

#include "common/error.hpp"

namespace strata::pace3d {

static_assert(std::endian::native == std::endian::little, "the voxel format is written in the host's byte order");

namespace {

template <class T>
void put(std::vector<std::byte>& out, size_t at, T v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}

template <class T>
T get(const std::byte* in, size_t at) {
  T v;
  std::memcpy(&v, in + at, sizeof v);
  return v;
}

void put_text(std::vector<std::byte>& out, size_t at, const char* text) {
  std::memcpy(out.data() + at, text, std::strlen(text));
}

bool has_text(const std::byte* in, size_t at, const char* text) {
  return std::memcmp(in + at, text, std::strlen(text)) == 0;
}

}  // namespace

std::vector<std::byte> encode_header(const VoxelHeader& h) {
  std::vector<std::byte> out(kHeaderBytes);
  put_text(out, 0, "STRVOXEL");
  put<uint32_t>(out, 8, 1);
  put<uint32_t>(out, 12, static_cast<uint32_t>(kHeaderBytes));
  put<uint64_t>(out, 16, h.nz);
  put<uint64_t>(out, 24, h.ny);
  put<uint64_t>(out, 32, h.nx);
  put<uint32_t>(out, 40, h.element_bytes);
  put<uint32_t>(out, 44, h.components);
  put<uint64_t>(out, 48, h.frames);
  put<uint64_t>(out, 56, kFrameMetaBytes);
  put<uint64_t>(out, 64, h.seed);
  put_text(out, 128, "strata pace3d voxel file (mpiiotester pattern); float32 voxels, x fastest");
  return out;
}

VoxelHeader decode_header(const std::byte* in, const std::string& path) {
  if (!has_text(in, 0, "STRVOXEL") || get<uint32_t>(in, 8) != 1 || get<uint32_t>(in, 12) != kHeaderBytes ||
      get<uint64_t>(in, 56) != kFrameMetaBytes) {
    throw_usage("\"" + path + "\" does not start with a version-1 Strata voxel header");
  }
  VoxelHeader h;
  h.nz = get<uint64_t>(in, 16);
  h.ny = get<uint64_t>(in, 24);
  h.nx = get<uint64_t>(in, 32);
  h.element_bytes = get<uint32_t>(in, 40);
  h.components = get<uint32_t>(in, 44);
  h.frames = get<uint64_t>(in, 48);
  h.seed = get<uint64_t>(in, 64);
  return h;
}

std::vector<std::byte> encode_frame_begin(uint64_t frame, double time, uint64_t field_bytes) {
  std::vector<std::byte> out(kFrameMetaBytes);
  put_text(out, 0, "FRAMEBEG");
  put<uint64_t>(out, 8, frame);
  put<double>(out, 16, time);
  put<uint64_t>(out, 24, field_bytes);
  return out;
}

std::vector<std::byte> encode_frame_end(const FrameEnd& e) {
  std::vector<std::byte> out(kFrameMetaBytes);
  put_text(out, 0, "FRAMEEND");
  put<uint64_t>(out, 8, e.frame);
  put<float>(out, 16, e.min);
  put<float>(out, 20, e.max);
  put<uint64_t>(out, 24, e.field_bytes);
  return out;
}

void check_frame_begin(const std::byte* in, uint64_t frame, uint64_t field_bytes, const std::string& path) {
  if (!has_text(in, 0, "FRAMEBEG") || get<uint64_t>(in, 8) != frame || get<uint64_t>(in, 24) != field_bytes) {
    throw Error(ErrorKind::verification, "\"" + path + "\": frame " + std::to_string(frame) +
                                             " does not start with its FRAMEBEG metadata (frame index and " +
                                             std::to_string(field_bytes) + " field bytes)");
  }
}

FrameEnd decode_frame_end(const std::byte* in, const std::string& path) {
  if (!has_text(in, 0, "FRAMEEND")) {
    throw Error(ErrorKind::verification, "\"" + path + "\": a frame does not end with FRAMEEND metadata");
  }
  FrameEnd e;
  e.frame = get<uint64_t>(in, 8);
  e.min = get<float>(in, 16);
  e.max = get<float>(in, 20);
  e.field_bytes = get<uint64_t>(in, 24);
  return e;
}

}  // namespace strata::pace3d
