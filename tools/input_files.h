// input_files.h: the files and folders `cudashim report` reads, taken as hostile.
//
// Only regular files are read: a FIFO, a device or a socket is refused from its stat and
// never opened (opening a FIFO blocks until a writer comes), and the descriptor is opened
// O_NONBLOCK and checked again, in case the name was replaced in between. A document is
// read whole up to a size limit; an event stream line by line, each line up to a limit,
// and never past the size the file had when it was opened (a process still running keeps
// appending). Folders are walked without recursion and without following links, each
// folder once (a bind mount can make a loop without a link), and a folder or entry that
// cannot be read is one problem, the rest is still walked: the shim creates its folders
// 0700, so another user's run folder inside a shared one is the common case.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudashim::tools {

// The largest report or flight record read (the shim's reports are tens of kilobytes; a
// document parses into about 16 bytes a value, so this bounds the memory of one file).
inline constexpr uint64_t kMaxDocumentBytes = 32ull << 20;
// The longest event-stream line read (the shim's are under a kilobyte or two).
inline constexpr uint64_t kMaxLineBytes = 4ull << 20;

// `path` as a message shows it: valid UTF-8, with other bytes and control characters as
// \xNN (no escape sequence in a file name reaches the terminal).
std::string shown(std::string_view path);

// A regular file open for reading. Move-only; closes its descriptor.
class InputFile {
 public:
  // Opens `path` (following links). Returns nullopt and sets `why` ("a FIFO (named pipe), not
  // a regular file", "cannot be opened (Permission denied)...") for anything else. Never blocks.
  static std::optional<InputFile> open(const std::string& path, std::string& why);
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  // Its size when it was opened.
  uint64_t size() const { return size_; }
  // Bytes consumed by read_all and next_line so far.
  uint64_t offset() const { return offset_; }

  // Reads the whole file when it holds at most `limit` bytes; else nullopt and `why`.
  std::optional<std::string> read_all(uint64_t limit, std::string& why);

  enum class Line {
    complete,    // `line` holds it, without its '\n'
    incomplete,  // the last bytes, with no '\n' after them (a write cut short)
    too_long,    // longer than the limit: not read (nor anything after it)
    end,         // nothing left
    error,       // read failed: `line` holds why
  };
  // Reads the next line of at most `limit` bytes, never past size().
  Line next_line(std::string& line, uint64_t limit);

 private:
  InputFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  // Reads up to `n` more bytes into buf_ (bounded by size()); returns how many, -1 on error.
  long fill(uint64_t n);
  int fd_ = -1;
  uint64_t size_ = 0, offset_ = 0;
  std::string buf_;    // read; what is before head_ is consumed
  size_t head_ = 0;
  uint64_t read_ = 0;  // bytes read from the file
  std::string error_;
};

// The report files of a run folder: every entry under `dir` named cudashim-*.json or
// cudashim-*.ndjson that is not a folder (links and special files included: InputFile::open
// decides about each), sorted. Links to folders are not followed; each folder is walked
// once; a folder that cannot be read adds one line to `problems` and is skipped.
std::vector<std::string> run_folder_files(const std::string& dir, std::vector<std::string>& problems);

}  // namespace cudashim::tools
