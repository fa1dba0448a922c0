// rank_compare.h: the ranks of one job side by side (reports that carry a rank).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/report_reader.h"

namespace cudashim::tools {

struct RankComparison {
  std::string text;     // the human table and the divergences, "" when fewer than 2 ranks
  nlohmann::json json;  // {"ranks": [...], "divergences": [...]}
};

// Compares the ranks: peak device memory and blocked time (outliers at more than
// 1.5x the median), and the CUDA libraries each loaded (a rank whose set differs
// from the majority's is named with the files that differ).
RankComparison compare_ranks(const std::vector<LoadedReport>& reports);

}  // namespace cudashim::tools
