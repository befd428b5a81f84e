// The voxel file of PACE3D as the mpiiotester paper describes it (Seiz et al., J. Supercomput.
// 2021, Figure 6): a header, then frames, each frame-specific metadata, the field, and more
// frame-specific metadata. The paper does not give the byte layout of the proprietary format;
// this is Strata's, documented in docs/kernels/pace3d.md and read independently by
// tests/python/test_pace3d.py. All numbers are little-endian.
//
//   header (512 bytes):  "STRVOXEL", u32 version 1, u32 header bytes 512, u64 nz, ny, nx,
//                        u32 element bytes, u32 components (floats per voxel), u64 frames,
//                        u64 frame metadata bytes (64), u64 seed; text at byte 128; zeros
//   frame:  begin (64):  "FRAMEBEG", u64 frame, f64 simulated time, u64 field bytes; zeros
//           field:       nz·ny·nx voxels, x fastest, each `components` float32
//           end (64):    "FRAMEEND", u64 frame, f32 min, f32 max of the field, u64 field bytes; zeros
//
// A single file (style sf) holds every frame one after another; a file per frame (mf, mf-wo)
// holds the header and one frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::pace3d {

constexpr uint64_t kHeaderBytes = 512;
constexpr uint64_t kFrameMetaBytes = 64;

struct VoxelHeader {
  uint64_t nz = 0, ny = 0, nx = 0;
  uint32_t element_bytes = 4;
  uint32_t components = 1;
  uint64_t frames = 0;
  uint64_t seed = 0;
  uint64_t field_bytes() const { return nz * ny * nx * element_bytes; }
  uint64_t frame_bytes() const { return kFrameMetaBytes + field_bytes() + kFrameMetaBytes; }
};

struct FrameEnd {
  uint64_t frame = 0;
  float min = 0, max = 0;
  uint64_t field_bytes = 0;
};

std::vector<std::byte> encode_header(const VoxelHeader& h);
// Throws a usage Error naming `path` when the bytes are not a version-1 header.
VoxelHeader decode_header(const std::byte* bytes, const std::string& path);

std::vector<std::byte> encode_frame_begin(uint64_t frame, double time, uint64_t field_bytes);
std::vector<std::byte> encode_frame_end(const FrameEnd& e);
// Throw a usage Error naming `path` and the frame when the metadata is not what is expected.
void check_frame_begin(const std::byte* bytes, uint64_t frame, uint64_t field_bytes, const std::string& path);
FrameEnd decode_frame_end(const std::byte* bytes, const std::string& path);

// Byte offset of frame `index` of a file: in a single file, frame `frame`; in a file per
// frame, always the first frame after the header.
inline uint64_t frame_offset(const VoxelHeader& h, uint64_t index) { return kHeaderBytes + index * h.frame_bytes(); }

}  // namespace strata::pace3d
