"""The planner's soft arm: the PCC arm that cusp-mjcf writes to MJCF, in CasADi.

Nothing is restated here: the arm is read from the compiled MuJoCo model of a generated scene
(cusp.mjcf_gen.pcc_layout gives the sections, chamber offsets d, rest lengths L0, the joint
table joint <- weight * (s | theta_x | theta_y); bodies, masses, inertias, joint axes and
anchors, tendon stiffness K, damping D and actuator ranges come from the MjModel). The
coordinates are the 9 chamber lengths l (m), as in [CUSP] eq. (1): each section's configuration
q = (s, theta_x, theta_y) is linear in its three chamber lengths (models/pcc.h), every joint of
the section is a fixed multiple of one of them, and the forward kinematics below repeats
MuJoCo's own (mj_kinematics: bodies in tree order, joints applied in order, hinges about their
anchors, slides along their axes), so the planner's arm and the simulated one have the same
geometry and the same lumped masses.

The equations of motion in chamber space are [CUSP] eq. (2) without the Coriolis/centrifugal term:
    M(l) ldot_dot + K (l - L0) + D ldot + G(l) = u + J^T f,
M = sum over bodies of m Jp^T Jp + Jw^T I_world Jw (the joint-space inertia projected onto the
chamber lengths), G = dV/dl with V the bodies' potential energy, K and D the chamber tendons'
stiffness and damping, u the chamber motors' forces (N).
"""
from __future__ import annotations

import dataclasses

import casadi as ca
import mujoco
import numpy as np

from cusp import mjcf_gen
from cusp.plan.mpcc import PlanError


def _quat_to_mat(q) -> np.ndarray:
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, np.asarray(q, dtype=float))
    return out.reshape(3, 3)


def _axis_rotation(axis: np.ndarray, angle) -> ca.SX:
    """Rotation matrix about the unit axis by angle (Rodrigues), angle symbolic."""
    k = ca.SX(np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]],
                        [-axis[1], axis[0], 0]], dtype=float))
    return ca.SX.eye(3) + ca.sin(angle) * k + (1 - ca.cos(angle)) * (k @ k)


def config_map(d: float) -> np.ndarray:
    """dq/dl (3 x 3): q = (s, theta_x, theta_y) = A l for one section (models/pcc.h)."""
    psi = np.asarray(mjcf_gen.CHAMBER_ANGLES)
    return np.vstack([np.full(3, 1 / 3), -2 / (3 * d) * np.cos(psi),
                      -2 / (3 * d) * np.sin(psi)])


@dataclasses.dataclass
class BodyTerm:
    body: int
    pos: ca.SX       # world position of the body frame (3,)
    rot: ca.SX       # world orientation (3 x 3)
    jacw: ca.SX      # angular-velocity Jacobian w.r.t. ldot (3 x n)


class ArmModel:
    """A generated PCC arm of a compiled MuJoCo model, as CasADi functions of the chamber
    lengths. Attributes (numpy): L0, K, D, ctrl_lo, ctrl_hi (n,), the chamber count n = 3 x
    sections; functions: mass(l) (n x n), gravity(l) (n,), tip(l) -> (pos, rot) of the tip
    disk's geom; ``qpos_from(l)``, ``lengths_from(qpos)`` convert to and from MuJoCo."""

    def __init__(self, model: mujoco.MjModel, arm: str = "arm"):
        try:
            layout = mjcf_gen.pcc_layout(model, arm)
        except KeyError as err:
            raise PlanError(f"arm = '{arm}': {err.args[0]}") from None
        self.model, self.name, self.layout = model, arm, layout
        nsec = len(layout)
        self.n = 3 * nsec
        tendons = [t for sec in layout for t in sec["tendons"]]
        self.L0 = np.array([model.tendon_lengthspring[t, 0] for t in tendons])
        self.K = np.array([model.tendon_stiffness[t] for t in tendons])
        self.D = np.array([model.tendon_damping[t] for t in tendons])
        # chamber motors: the actuator on each chamber tendon (gear 1, the generator's motor)
        self.actuators = []
        for t in tendons:
            ids = [a for a in range(model.nu) if model.actuator_trntype[a] ==
                   mujoco.mjtTrn.mjTRN_TENDON and model.actuator_trnid[a, 0] == t and
                   model.actuator_gainprm[a, 0] == 1.0 and model.actuator_biastype[a] == 0]
            if len(ids) != 1:
                raise PlanError(f"arm = '{arm}': chamber tendon "
                                f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_TENDON, t)} "
                                f"needs exactly one motor (found {len(ids)})")
            self.actuators.append(ids[0])
        self.ctrl_lo = np.array([model.actuator_ctrlrange[a, 0] for a in self.actuators])
        self.ctrl_hi = np.array([model.actuator_ctrlrange[a, 1] for a in self.actuators])

        # joint qpos address -> (section, kind index in q, weight)
        self.joint_map = {}
        for i, sec in enumerate(layout):
            for adr, kind, weight in sec["joints"]:
                self.joint_map[adr] = (i, "sxy".index(kind), weight)
        self.amap = [config_map(sec["d"]) for sec in layout]
        geoms = [g for sec in layout for g in sec["disks"]]
        self.disk_geoms = list(dict.fromkeys(geoms))
        self.tip_geom = self.disk_geoms[-1]
        bodies = [int(model.geom_bodyid[g]) for g in self.disk_geoms]
        self.base_body, self.bodies = bodies[0], bodies[1:]
        for parent, child in zip(bodies, bodies[1:]):
            if model.body_parentid[child] != parent:
                raise PlanError(f"arm = '{arm}': disk bodies are not a chain")
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)
        self.base_pos = data.xpos[self.base_body].copy()
        self.base_rot = data.xmat[self.base_body].reshape(3, 3).copy()
        self.gravity_vec = model.opt.gravity.copy()
        self._build()

    # ---- symbolic model ---------------------------------------------------------------------

    def _build(self):
        m = self.model
        n = self.n
        l = ca.SX.sym("l", n)
        config = [ca.mtimes(self.amap[i], l[3 * i:3 * i + 3]) for i in range(len(self.layout))]
        # rows of d(joint value)/dl: weight * row of the section's config map, zeros elsewhere
        def qrow(adr):
            i, kind, w = self.joint_map[adr]
            row = np.zeros(n)
            row[3 * i:3 * i + 3] = w * self.amap[i][kind]
            return row

        pos = ca.SX(self.base_pos)
        rot = ca.SX(self.base_rot)
        # the joints of a section repeat a few (axis, value) pairs: one rotation each, shared
        cache = {}

        def rotation(axis, i, kind, w, ref):
            key = (tuple(axis), i, kind, w, ref)
            if key not in cache:
                cache[key] = _axis_rotation(axis, w * config[i][kind] - ref)
            return cache[key]

        jw = ca.SX.zeros(3, n)
        terms = []
        for b in self.bodies:
            pos = pos + rot @ ca.SX(m.body_pos[b])
            rot = rot @ ca.SX(_quat_to_mat(m.body_quat[b]))
            for j in range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]):
                adr = int(m.jnt_qposadr[j])
                if adr not in self.joint_map:
                    raise PlanError(f"arm = '{self.name}': joint "
                                    f"{mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)} is "
                                    "not in the arm's joint table")
                i, kind, w = self.joint_map[adr]
                value = w * config[i][kind] - m.qpos0[adr]
                axis = np.asarray(m.jnt_axis[j], dtype=float)
                jpos = ca.SX(m.jnt_pos[j])
                if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
                    anchor = pos + rot @ jpos
                    jw = jw + (rot @ ca.SX(axis)) @ ca.SX(qrow(adr)).T
                    rot = rot @ rotation(axis, i, kind, w, m.qpos0[adr])
                    pos = anchor - rot @ jpos
                elif m.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE:
                    pos = pos + (rot @ ca.SX(axis)) * value
                else:
                    raise PlanError(f"arm = '{self.name}': joint type {m.jnt_type[j]} in a "
                                    "PCC arm")
            terms.append(BodyTerm(b, pos, rot, jw))
        mass = ca.SX.zeros(n, n)
        # M from the bodies' Jacobians (kg, kg m, kg m^2 by entry)
        potential = 0
        for t in terms:
            b = t.body
            xipos = t.pos + t.rot @ ca.SX(m.body_ipos[b])
            irot = t.rot @ ca.SX(_quat_to_mat(m.body_iquat[b]))
            jp = ca.jacobian(xipos, l)
            inertia = irot @ ca.diag(ca.SX(m.body_inertia[b])) @ irot.T
            mass += m.body_mass[b] * (jp.T @ jp) + t.jacw.T @ inertia @ t.jacw
            potential += -m.body_mass[b] * ca.dot(ca.SX(self.gravity_vec), xipos)
        gravity = ca.gradient(potential, l)
        tip = terms[-1]
        gpos = tip.pos + tip.rot @ ca.SX(m.geom_pos[self.tip_geom])
        grot = tip.rot @ ca.SX(_quat_to_mat(m.geom_quat[self.tip_geom]))
        self.l_sym = l
        self.mass = ca.Function("mass", [l], [mass])
        self.gravity = ca.Function("gravity", [l], [gravity])
        self.tip = ca.Function("tip", [l], [gpos, grot])
        self.tip_jacw = ca.Function("tip_jacw", [l], [tip.jacw])
        # velocity of a point fixed in the tip disk, given in the tip geom's frame
        p_loc = ca.SX.sym("p_loc", 3)
        point = gpos + grot @ p_loc
        self.tip_point_jac = ca.Function("tip_point_jac", [l, p_loc], [ca.jacobian(point, l)])

    # ---- conversions with MuJoCo -----------------------------------------------------------

    def qpos_from(self, qpos: np.ndarray, l) -> None:
        """Write the arm's joints into qpos for chamber lengths l (n,) (m)."""
        mjcf_gen.pcc_set_lengths(self.model, qpos, self.name,
                                 np.asarray(l, dtype=float).reshape(-1, 3))

    def qvel_from(self, qvel: np.ndarray, ldot) -> None:
        """Write the arm's joint velocities into qvel for chamber rates ldot (n,) (m/s)."""
        ldot = np.asarray(ldot, dtype=float)
        for adr, (i, kind, w) in self.joint_map.items():
            dof = self._dof_of_qpos(adr)
            qvel[dof] = w * self.amap[i][kind] @ ldot[3 * i:3 * i + 3]

    def _dof_of_qpos(self, adr: int) -> int:
        if not hasattr(self, "_dofmap"):
            m = self.model
            self._dofmap = {int(m.jnt_qposadr[j]): int(m.jnt_dofadr[j]) for j in range(m.njnt)}
        return self._dofmap[adr]

    def lengths_from(self, data: mujoco.MjData) -> tuple[np.ndarray, np.ndarray]:
        """Chamber lengths (m) and rates (m/s) of the simulated arm: its chamber tendons'
        lengths and velocities (needs data.ten_length / ten_velocity up to date)."""
        tendons = [t for sec in self.layout for t in sec["tendons"]]
        return data.ten_length[tendons].copy(), data.ten_velocity[tendons].copy()

    def rest(self, u=None, iterations: int = 50) -> np.ndarray:
        """Static equilibrium K (l - L0) + G(l) = u (m) by Newton's method, from L0."""
        u = np.zeros(self.n) if u is None else np.asarray(u, dtype=float)
        l = ca.SX.sym("l", self.n)
        res = self.K * (l - self.L0) + self.gravity(l) - u
        jac = ca.Function("rest_newton", [l], [res, ca.jacobian(res, l)])
        x = self.L0.copy()
        for _ in range(iterations):
            r, j = jac(x)
            step = np.linalg.solve(np.asarray(j), -np.asarray(r).ravel())
            x = x + step
            if np.max(np.abs(step)) < 1e-13:
                return x
        raise PlanError("arm rest: Newton did not converge (is the arm too soft for gravity?)")

    # ---- one step of the planner's dynamics ------------------------------------------------

    def step_function(self, h: float) -> ca.Function:
        """(l, v, u, gen) -> (l+, v+): one implicit-Euler step of h (s) of the planner's
        equations of motion (the residual the dynamic stage imposes, [CUSP] eq. (17)), solved by
        Newton's method; gen is the generalised contact force J^T F (N)."""
        n = self.n
        l0, v0 = ca.SX.sym("l0", n), ca.SX.sym("v0", n)
        u, gen, v1 = ca.SX.sym("u", n), ca.SX.sym("gen", n), ca.SX.sym("v1", n)
        l1 = l0 + h * v1
        res = self.mass(l1) @ (v1 - v0) - h * (u - self.K * (l1 - self.L0) - self.D * v1 -
                                               self.gravity(l1) + gen)
        root = ca.rootfinder("arm_implicit_euler", "newton",
                             ca.Function("res", [v1, ca.vertcat(l0, v0, u, gen)], [res]),
                             {"abstol": 1e-12, "max_iter": 50})
        v_next = root(v0, ca.vertcat(l0, v0, u, gen))
        return ca.Function("arm_step", [l0, v0, u, gen], [l0 + h * v_next, v_next])
