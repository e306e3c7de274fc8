import mujoco
import cusp  # registers cusp.contact (after pip install, import mujoco does it too)

XML = """
<mujoco>
  <extension><plugin plugin="cusp.contact">
    <instance name="cusp"><config key="bodies" value="box"/></instance>
  </plugin></extension>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>"""

model = mujoco.MjModel.from_xml_string(XML)
data = mujoco.MjData(model)
mujoco.mj_step(model, data, 1000)  # 2 s at MuJoCo's default step of 2 ms
contacts = cusp.contacts(model, data)  # the last step's contacts, numpy arrays in SI units
print(f"box bottom at z = {data.qpos[2] - 0.05:.2e} m, largest speed {abs(data.qvel).max():.1e}")
print(f"{len(contacts)} contact(s), mode {contacts.mode} (1 = stick), "
      f"normal force {contacts.force[:, 0].sum():.2f} N")
