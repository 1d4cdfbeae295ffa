// Stage 6 of `register`: the penalty terms of reg_f3d and their gradients with respect to the
// control points, all evaluated at the control points only (reg_f3d's approximation), with the
// cubic B-spline's values and derivatives at a knot: [1/6, 2/3, 1/6], [-1/2, 0, 1/2], [1, -2, 1]
// on the 3x3x3 neighbours of every interior node (index 1 .. g-2 on each axis).
//  * bending energy: sum over interior nodes and the three components of the squared second
//    derivatives (cross terms twice) with respect to grid indices, divided by 3 * (number of nodes)
//    (reg_f3d's value, reg_spline_approxBendingEnergy);
//  * linear elasticity: J the world Jacobian at the node, U its polar stretch (J = R U):
//    sum ||U - I||_F^2 = ||J||_F^2 - 2 ||J||_* + 3, divided by 3 * (number of nodes) (reg_f3d's
//    value, reg_spline_approxLinearEnergy: rotation removed, symmetric part of the displacement);
//  * Jacobian log: mean over interior nodes of log(det J)^2 (reg_f3d's approximated value), below
//    det 0.05 continued by its second-order Taylor polynomial there, so a folded node (det <= 0) costs
//    a large finite amount and the gradient leads out of the fold (reg_f3d returns NaN there and runs
//    its folding correction instead).
// Our gradients are the exact derivatives of these values (reg_f3d's are approximations: e.g. its
// bending-energy gradient is 1.5x the derivative of its value); `weight` multiplies the derivative,
// which is added to grad (3 * points doubles, planar).
#pragma once
#include "core/types.hpp"

namespace evk::reg_deform {

double bending_energy(const Grid& g, int threads = 0);
void bending_energy_gradient(const Grid& g, double weight, double* grad, int threads = 0);
double linear_energy(const Grid& g, int threads = 0);
void linear_energy_gradient(const Grid& g, double weight, double* grad, int threads = 0);
double jacobian_log_penalty(const Grid& g, int threads = 0);
void jacobian_log_gradient(const Grid& g, double weight, double* grad, int threads = 0);

// Minimum Jacobian determinant over the interior control points.
double min_node_jacobian(const Grid& g);
// The orthogonal polar factor R of a nonsingular 3x3 matrix (J = R U, U symmetric positive
// definite), by Newton's iteration R <- (R + R^-T) / 2.
void polar_rotation(const double J[3][3], double R[3][3]);

}  // namespace evk::reg_deform
