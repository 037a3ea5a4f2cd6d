"""Programs in the styles of public neural-ODE and physics-style code: a fixed-step RK4
integrator written by hand over ``torch.linspace`` times, an ODE function as an ``nn.Module``
with ``forward(self, t, y)``, trajectories stacked by ``torch.stack`` and fitted by a loss
whose gradient flows back through the solver, and a Hamiltonian network whose vector field is
``torch.autograd.grad(H.sum(), x, create_graph=True)``, trained by a second backward through
that gradient.

Each program takes one library's module triple (torch, nn, F), seeds torch's generator, runs
on synthetic data in the default dtype and returns what it would print: numbers, flags,
orders, error class names and the values of small tensors as lists.
``test_public_model_families.py`` runs it under both libraries and compares. The models,
names, sizes and constants are the programs' own."""

import math

from program_output import error_class, values


# ----- a neural ODE fitted through a hand-written RK4 -----------------------------------------

def neural_ode_rk4(torch, nn, F):
    """A spiral's true trajectory from a known linear field, an ODE function learning it,
    ``odeint`` by RK4 (and by Euler) over ``torch.linspace`` times returning the stacked
    states, an L1 loss on the trajectory, the gradient through every solver step, and the
    function-evaluation count."""
    torch.manual_seed(0)
    printed = []

    def rk4_step(func, t, dt, y):
        k1 = func(t, y)
        k2 = func(t + dt / 2, y + dt * k1 / 2)
        k3 = func(t + dt / 2, y + dt * k2 / 2)
        k4 = func(t + dt, y + dt * k3)
        return y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6

    def euler_step(func, t, dt, y):
        return y + dt * func(t, y)

    def odeint(func, y0, t, method="rk4"):
        step = rk4_step if method == "rk4" else euler_step
        ys = [y0]
        y = y0
        for t0, t1 in zip(t[:-1], t[1:]):
            y = step(func, t0, t1 - t0, y)
            ys.append(y)
        return torch.stack(ys)                      # (T, batch, dim)

    true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])

    class Lambda(nn.Module):
        def forward(self, t, y):
            return torch.mm(y ** 3, true_A)

    class ODEFunc(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
            self.nfe = 0
            for m in self.net.modules():
                if isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, mean=0, std=0.1)
                    nn.init.constant_(m.bias, val=0)

        def forward(self, t, y):
            self.nfe += 1
            return self.net(y ** 3)

    t = torch.linspace(0., 1., 11)
    true_y0 = torch.tensor([[2., 0.]])
    with torch.no_grad():
        true_y = odeint(Lambda(), true_y0, t)
    printed += [list(true_y.shape), values(true_y[-1]), values(t[:3])]

    def get_batch(batch_time=4, batch_size=3):
        s = torch.from_numpy(torch.randperm(len(t) - batch_time).numpy()[:batch_size])
        batch_y0 = true_y[s]                        # (M, 1, D)
        batch_t = t[:batch_time]
        batch_y = torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)
        return batch_y0, batch_t, batch_y

    func = ODEFunc()
    optimizer = torch.optim.RMSprop(func.parameters(), lr=1e-2)
    for _ in range(3):
        optimizer.zero_grad()
        batch_y0, batch_t, batch_y = get_batch()
        pred_y = odeint(func, batch_y0, batch_t)
        loss = torch.mean(torch.abs(pred_y - batch_y))
        loss.backward()
        optimizer.step()
        printed += [loss.item(), list(pred_y.shape), func.nfe]
    with torch.no_grad():
        pred_y = odeint(func, true_y0, t)
        euler_y = odeint(func, true_y0, t, method="euler")
        printed += [F.l1_loss(pred_y, true_y).item(), values(pred_y[-1] - euler_y[-1]),
                    func.nfe]

    # the adjoint habit: the gradient of the final state w.r.t. y0 and the parameters
    y0 = true_y0.clone().requires_grad_(True)
    yT = odeint(func, y0, torch.linspace(0, 0.5, 6))[-1]
    grads = torch.autograd.grad(yT.pow(2).sum(), [y0] + list(func.parameters()),
                                allow_unused=True)
    printed += [values(grads[0]), values(grads[-1]), [g is None for g in grads]]

    # a damped oscillator as a time-dependent function, integrated over a float time tensor
    class Damped(nn.Module):
        def __init__(self):
            super().__init__()
            self.k = nn.Parameter(torch.tensor(4.0))
            self.c = nn.Parameter(torch.tensor(0.3))

        def forward(self, t, state):
            x, v = state.unbind(-1)
            force = torch.cos(2 * math.pi * t)
            return torch.stack([v, -self.k * x - self.c * v + force], dim=-1)

    osc = Damped()
    traj = odeint(osc, torch.tensor([1.0, 0.0]), torch.linspace(0, 2, 21))
    energy = 0.5 * traj[:, 1] ** 2 + 0.5 * osc.k * traj[:, 0] ** 2
    energy.mean().backward()
    printed += [values(traj[::5, 0]), energy.max().item(), osc.k.grad.item(), osc.c.grad.item()]
    return printed


# ----- a Hamiltonian neural network ----------------------------------------------------------

def hamiltonian_net(torch, nn, F):
    """An HNN: a scalar H(q, p) network whose symplectic gradient ``(dH/dp, -dH/dq)`` comes
    from ``torch.autograd.grad(H.sum(), x, create_graph=True)`` split by ``chunk``, fitted to
    a spring's time derivatives by a loss whose backward goes through that gradient, then
    rolled out by a leapfrog-free RK4 whose energy drift is printed."""
    torch.manual_seed(1)
    printed = []

    class HNN(nn.Module):
        def __init__(self, input_dim=2, hidden_dim=32):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh(),
                                     nn.Linear(hidden_dim, hidden_dim), nn.Softplus(),
                                     nn.Linear(hidden_dim, 1, bias=False))
            for layer in self.net:
                if isinstance(layer, nn.Linear):
                    nn.init.orthogonal_(layer.weight)

        def forward(self, x):
            return self.net(x)

        def time_derivative(self, x):
            if not x.requires_grad:
                x = x.requires_grad_(True)
            H = self.forward(x)
            dH = torch.autograd.grad(H.sum(), x, create_graph=True)[0]
            dHdq, dHdp = torch.chunk(dH, 2, dim=-1)
            return torch.cat([dHdp, -dHdq], dim=-1)

    # a spring: H = (q^2 + p^2) / 2, so dq/dt = p, dp/dt = -q
    q_p = torch.randn(16, 2) * 1.5
    dxdt = torch.cat([q_p[:, 1:], -q_p[:, :1]], dim=1)
    model = HNN()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    for _ in range(4):
        x = q_p.clone().requires_grad_()
        pred = model.time_derivative(x)
        loss = (pred - dxdt).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        printed += [loss.item(), x.grad is None, model.net[0].weight.grad.norm().item()]
    printed.append(values(model.net[-1].weight.grad[:, :4]))

    # the gradient of a gradient: a Hessian-vector product and the second derivative
    x = torch.tensor([[0.5, -1.0]], requires_grad=True)
    H = model(x)
    (dH,) = torch.autograd.grad(H, x, grad_outputs=torch.ones_like(H), create_graph=True)
    v = torch.tensor([[1.0, 0.0]])
    (hvp,) = torch.autograd.grad((dH * v).sum(), x, retain_graph=True)
    printed += [values(dH), values(hvp), dH.requires_grad, hvp.requires_grad]
    printed += [error_class(lambda: torch.autograd.grad(H.sum(), x)),
                error_class(lambda: torch.autograd.grad(hvp.sum(), x))]

    def rk4(fn, x, dt):
        k1 = fn(x)
        k2 = fn(x + dt / 2 * k1)
        k3 = fn(x + dt / 2 * k2)
        k4 = fn(x + dt * k3)
        return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    state = torch.tensor([[1.0, 0.0]])
    energies, path = [], [state]
    for _ in range(8):
        state = rk4(model.time_derivative, state, 0.1).detach()
        path.append(state)
        energies.append(model(state).item())
    path = torch.cat(path)
    printed += [values(path[-1]), max(energies) - min(energies), list(path.shape)]
    true_energy = 0.5 * path.pow(2).sum(dim=1)
    printed.append(values(true_energy[::4]))
    return printed
