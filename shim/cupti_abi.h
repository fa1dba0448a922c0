// cupti_abi.h: the part of CUPTI's ABI the precise mode uses (shim/cupti_collector.cpp), copied
// from CUPTI 13.0's headers (cupti_activity.h, cupti_result.h; CUPTI_API_VERSION 130001) so that the build
// needs no CUPTI. Only the record fields read here; their offsets are the same in
// CUpti_ActivityKernel4..11, CUpti_ActivityMemcpy5/6 and CUpti_ActivityMemset4 (checked with
// offsetof against the 13.0 header; the 12.x layouts of these members are the same).
#pragma once
#include <cstddef>
#include <cstdint>

namespace cudashim::cupti {

using Result = int;  // CUptiResult
inline constexpr Result kSuccess = 0;
inline constexpr Result kErrorMaxLimitReached = 12;  // cuptiActivityGetNextRecord: no more records
inline constexpr Result kErrorMultipleSubscribers = 39;  // CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED

// CUpti_ActivityKind values.
inline constexpr int kKindMemcpy = 1, kKindMemset = 2, kKindKernel = 3, kKindConcurrentKernel = 10;
inline constexpr uint32_t kFlushForced = 1;  // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED

struct Activity {  // CUpti_Activity: every record starts with its kind
  int kind;
};
// Field offsets: kernels (CUpti_ActivityKernel*) and copies/memsets (CUpti_ActivityMemcpy*,
// CUpti_ActivityMemset*).
inline constexpr size_t kKernelStart = 16, kKernelEnd = 24, kKernelDevice = 40, kKernelContext = 44;
inline constexpr size_t kCopyStart = 16, kCopyEnd = 24, kCopyDevice = 32, kCopyContext = 36;

using BufferRequested = void (*)(uint8_t** buffer, size_t* size, size_t* max_records);
using BufferCompleted = void (*)(void* context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid_size);

using RegisterCallbacksFn = Result (*)(BufferRequested, BufferCompleted);
using ActivityKindFn = Result (*)(int kind);
using FlushAllFn = Result (*)(uint32_t flag);
using GetNextRecordFn = Result (*)(uint8_t* buffer, size_t valid_size, Activity** record);
using GetTimestampFn = Result (*)(uint64_t* timestamp);
using EnableContextFn = Result (*)(void* context, int kind);
using SubscribeFn = Result (*)(void** subscriber, void* callback, void* userdata);

}  // namespace cudashim::cupti
