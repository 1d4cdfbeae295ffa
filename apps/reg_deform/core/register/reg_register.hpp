// Stage 8 of `register`: reg_f3d's multi-level driver. Pyramid (--ln levels, the finest --lp
// performed), optional Gaussian smoothing per level, a grid at the coarsest performed level with
// spacing S * 2^(ln-1) (S the final spacing; as reg_f3d, with --lp < --ln the final grid keeps
// S * 2^(ln-lp)), initialised to the affine; per level: intensities rescaled for the measure,
// penalty weights be / 16^(ln-1) and le / 3^(ln-1) at the first level, x16 and x3 per later level
// (reg_f3d's grid-refinement rule), similarity weight 1 - (be + le + jl) (or 0 with all penalty
// weights divided by their sum when it is >= 1), iteration limit maxit * 2^(lp-1) halved per level,
// the grid refined (B-spline subdivision) between levels. The backend comes from a factory.
#pragma once
#include <string>

#include "core/register/reg_engine.hpp"
#include "core/register/reg_options.hpp"

namespace evk::reg_deform {

// Checks the options and inputs (InputError naming the option or input), e.g. --lp > --ln, a
// spacing below one voxel, empty or constant images, NaN/Inf, masks without active voxels.
struct InputNames {  // how errors name the inputs (the CLI passes file names)
  std::string ref = "reference", flo = "floating", ref_mask = "--rmask", flo_mask = "--fmask";
};
void check_register_inputs(const Volume& ref, const Volume& flo, const Mask& ref_mask, const Mask& flo_mask,
                           const RegisterOptions& opt, const InputNames& names = {});

RegisterResult register_images(const Volume& ref, const Volume& flo, const Mask& ref_mask, const Mask& flo_mask,
                               const RegisterOptions& opt, const EngineFactory& factory = make_cpu_engine,
                               const RegisterCallbacks& cb = {});

// The NMI of `image` (already on the reference grid) against `ref` as NiftyReg's reg_measure -nmi
// computes it: 64 bins, both rescaled by their own min..max, reg_f3d's histogram; reg_measure's
// identity cubic resampling leaves a 1-voxel border at the low and 2 at the high end of every axis
// undefined (left out); NaN values count as 0 (NiftyReg's NIfTI reader replaces them).
double nmi_like_reg_measure(const Volume& ref, const Volume& image, int bins = 64);

}  // namespace evk::reg_deform
