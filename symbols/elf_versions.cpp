// Symbol versioning tables: .gnu.version_d (definitions) and .gnu.version_r (needs).
// Both are chains of entries linked by relative offsets; every walk is bounded
// by a step budget derived from the section size, so corrupt links cannot loop.
#include <climits>

#include "symbols/elf_readers.h"

namespace cudashim::symbols::detail {
namespace {

// The data of the first section of `sh_type` (nullptr data when there is none).
struct VersionSection {
  Elf_Data* data = nullptr;
  std::size_t strtab = 0;
  std::size_t entries = 0;  // sh_info: number of top-level entries
};

Result<VersionSection> version_section(const ElfHandle& h, GElf_Word sh_type, const char* what) {
  auto found = find_section_by_type(h, sh_type);
  if (!found.ok()) return found.to_error();
  if (!found.value()) return VersionSection{};
  auto data = section_data(h, found.value()->scn, found.value()->shdr, what);
  if (!data.ok()) return data.to_error();
  return VersionSection{data.value(), found.value()->shdr.sh_link, found.value()->shdr.sh_info};
}

// Advances `offset` by `next`; false when the result leaves the data or int range.
bool advance(std::size_t& offset, std::uint64_t next, const Elf_Data* data) {
  if (next == 0 || next > data->d_size - std::min<std::size_t>(offset, data->d_size)) return false;
  offset += next;
  return offset <= static_cast<std::size_t>(INT_MAX);
}

// One walk's step budget: no legitimate table has more entries than bytes / 8.
struct Budget {
  std::size_t left;
  bool take() { return left > 0 ? (--left, true) : false; }
};

Result<VersionDefinition> read_verdef(const ElfHandle& h, const VersionSection& sec, std::size_t offset,
                                      const GElf_Verdef& vd, Budget& budget) {
  VersionDefinition def;
  def.index = vd.vd_ndx;
  def.is_base = (vd.vd_flags & VER_FLG_BASE) != 0;
  std::size_t aux = offset;
  if (!advance(aux, vd.vd_aux, sec.data) && vd.vd_cnt > 0) return h.error("bad verdef aux offset");
  for (std::size_t k = 0; k < vd.vd_cnt; ++k) {
    GElf_Verdaux vda{};
    if (!budget.take() || gelf_getverdaux(sec.data, static_cast<int>(aux), &vda) == nullptr)
      return h.error("bad verdaux entry at offset " + std::to_string(aux) + " of .gnu.version_d");
    auto name = string_at(h, sec.strtab, vda.vda_name, "a version definition");
    if (!name.ok()) return name.to_error();
    (k == 0 ? def.name : def.parents.emplace_back()) = std::move(name.value());
    if (k + 1 < vd.vd_cnt && !advance(aux, vda.vda_next, sec.data))
      return h.error("bad verdaux chain in .gnu.version_d");
  }
  return def;
}

Result<VersionNeed> read_verneed(const ElfHandle& h, const VersionSection& sec, std::size_t offset,
                                 const GElf_Verneed& vn, Budget& budget) {
  VersionNeed need;
  auto file = string_at(h, sec.strtab, vn.vn_file, "a version need file");
  if (!file.ok()) return file.to_error();
  need.file = std::move(file.value());
  std::size_t aux = offset;
  if (!advance(aux, vn.vn_aux, sec.data) && vn.vn_cnt > 0) return h.error("bad verneed aux offset");
  for (std::size_t k = 0; k < vn.vn_cnt; ++k) {
    GElf_Vernaux vna{};
    if (!budget.take() || gelf_getvernaux(sec.data, static_cast<int>(aux), &vna) == nullptr)
      return h.error("bad vernaux entry at offset " + std::to_string(aux) + " of .gnu.version_r");
    auto name = string_at(h, sec.strtab, vna.vna_name, "a needed version");
    if (!name.ok()) return name.to_error();
    need.versions.push_back(NeededVersion{std::move(name.value()), vna.vna_other,
                                          (vna.vna_flags & VER_FLG_WEAK) != 0});
    if (k + 1 < vn.vn_cnt && !advance(aux, vna.vna_next, sec.data))
      return h.error("bad vernaux chain in .gnu.version_r");
  }
  return need;
}

}  // namespace

Result<std::vector<VersionDefinition>> read_version_definitions(const ElfHandle& h) {
  auto sec = version_section(h, SHT_GNU_verdef, ".gnu.version_d");
  if (!sec.ok()) return sec.to_error();
  std::vector<VersionDefinition> defs;
  const VersionSection& s = sec.value();
  if (s.data == nullptr) return defs;
  Budget budget{s.data->d_size / 8 + 1};
  std::size_t offset = 0;
  for (std::size_t n = 0; n < s.entries; ++n) {
    GElf_Verdef vd{};
    if (!budget.take() || gelf_getverdef(s.data, static_cast<int>(offset), &vd) == nullptr)
      return h.error("bad verdef entry at offset " + std::to_string(offset) + " of .gnu.version_d");
    auto def = read_verdef(h, s, offset, vd, budget);
    if (!def.ok()) return def.to_error();
    defs.push_back(std::move(def.value()));
    if (vd.vd_next == 0) break;
    if (!advance(offset, vd.vd_next, s.data)) return h.error("bad verdef chain in .gnu.version_d");
  }
  return defs;
}

Result<std::vector<VersionNeed>> read_version_needs(const ElfHandle& h) {
  auto sec = version_section(h, SHT_GNU_verneed, ".gnu.version_r");
  if (!sec.ok()) return sec.to_error();
  std::vector<VersionNeed> needs;
  const VersionSection& s = sec.value();
  if (s.data == nullptr) return needs;
  Budget budget{s.data->d_size / 8 + 1};
  std::size_t offset = 0;
  for (std::size_t n = 0; n < s.entries; ++n) {
    GElf_Verneed vn{};
    if (!budget.take() || gelf_getverneed(s.data, static_cast<int>(offset), &vn) == nullptr)
      return h.error("bad verneed entry at offset " + std::to_string(offset) + " of .gnu.version_r");
    auto need = read_verneed(h, s, offset, vn, budget);
    if (!need.ok()) return need.to_error();
    needs.push_back(std::move(need.value()));
    if (vn.vn_next == 0) break;
    if (!advance(offset, vn.vn_next, s.data)) return h.error("bad verneed chain in .gnu.version_r");
  }
  return needs;
}

}  // namespace cudashim::symbols::detail
