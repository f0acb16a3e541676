// How this process was started: by an MPI launcher (mpirun) or alone, its
// rank, and what follows from the rank: its GPU on this host and its own
// cache folder. Read from the environment, without initialising MPI, so a
// plain `hone tune` never touches MPI.
//
//   dist::Launch l = dist::detect_launch();           // l.size == 1 when alone
//   if (l.by_mpirun) dist::use_rank_resources(l);      // caches and GPU per rank
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "hone/error.h"

namespace hone::dist {

struct Launch {
  bool by_mpirun = false;  // an MPI launcher set its rank variables
  std::string evidence;    // "OMPI_COMM_WORLD_SIZE=2"
  int size = 1, rank = 0;
  int local_rank = 0;  // the rank among those on this host: its GPU
};

/// From Open MPI's OMPI_COMM_WORLD_{SIZE,RANK,LOCAL_RANK}, else PMIx's
/// PMIX_RANK, else MPICH/Hydra's PMI_SIZE/PMI_RANK (local rank
/// MPI_LOCALRANKID). `env` maps names to values (tests); the overload reads
/// the process environment. Errors: a variable that is not a number.
[[nodiscard]] Result<Launch> detect_launch(const std::map<std::string, std::string>& env);
[[nodiscard]] Result<Launch> detect_launch();

/// The GPU ordinal a rank takes on its host: its local rank, unless
/// HONE_CUDA_DEVICE is set already (then that). The cuda backend opens
/// device $HONE_CUDA_DEVICE (default 0).
std::string cuda_device_for(const Launch& launch, const char* already_set);

/// `path` with ".rank<R>" before its extension: tuning.db -> tuning.rank1.db.
std::filesystem::path per_rank_path(const std::filesystem::path& path, int rank);

/// Gives this rank its own caches (HONE_CACHE_DIR = <cache dir>/rank<R>, so
/// the tuning cache and aot's compile cache) and its own GPU
/// (HONE_CUDA_DEVICE). Call before any thread starts (setenv).
void use_rank_resources(const Launch& launch);

}  // namespace hone::dist
