"""pytorch/examples' differentiable_physics/mass_spring.py as published, with matplotlib's plot
replaced by a function that keeps the three position arrays, fewer epochs and simulation steps, and
the argparse options passed as a list: a MassSpringSystem whose trainable initial positions are an
nn.Parameter(torch.randn(...)) next to a fixed particle, simulated by semi-implicit Euler steps that
write into tensors in place under autograd (forces = torch.zeros_like(positions) then forces[i] +=
force and forces[j] -= force with a force that requires grad, forces[:, 1] -= gravity, then
positions[0] = ... and velocities[0] = torch.tensor(...) on results of the graph), dir_vec.norm(),
Adam on the squared distance to the target, the log every log_interval epochs and the final
positions printed; then the eval mode under torch.no_grad(). Seeds are torch.manual_seed in both
libraries, so the initial positions agree."""
import argparse

from prog_helpers import captured_run, compare_program, numpy_of, printed_lines


def mass_spring(torch, init=None, argv=("--epochs", "40", "--steps", "20", "--log_interval", "10")):
    nn = torch.nn
    optim = torch.optim
    shown = {}

    class MassSpringSystem(nn.Module):
        def __init__(self, num_particles, springs, mass=1.0, dt=0.01, gravity=9.81, device="cpu"):
            super().__init__()
            self.device = device
            self.mass = mass
            self.springs = springs
            self.dt = dt
            self.gravity = gravity

            # Particle 0 is fixed at the origin
            self.initial_position_0 = torch.tensor([0.0, 0.0], device=device)

            # Remaining particles are trainable
            self.initial_positions_rest = nn.Parameter(torch.randn(num_particles - 1, 2, device=device))

            # Velocities
            self.velocities = torch.zeros(num_particles, 2, device=device)

        def forward(self, steps):
            positions = torch.cat([self.initial_position_0.unsqueeze(0), self.initial_positions_rest], dim=0)
            velocities = self.velocities

            for _ in range(steps):
                forces = torch.zeros_like(positions)

                # Compute spring forces
                for (i, j, rest_length, stiffness) in self.springs:
                    xi, xj = positions[i], positions[j]
                    dir_vec = xj - xi
                    dist = dir_vec.norm()
                    force = stiffness * (dist - rest_length) * dir_vec / (dist + 1e-6)
                    forces[i] += force
                    forces[j] -= force

                # Apply gravity
                forces[:, 1] -= self.gravity * self.mass

                # Semi-implicit Euler integration
                acceleration = forces / self.mass
                velocities = velocities + acceleration * self.dt
                positions = positions + velocities * self.dt

                # Fix particle 0 at origin
                positions[0] = self.initial_position_0
                velocities[0] = torch.tensor([0.0, 0.0], device=positions.device)

            return positions

    def visualize_positions(initial, final, target, save_path="mass_spring_viz.png"):
        """Stands in for the matplotlib scatter plot: keeps what it would draw."""
        shown.update(initial=initial, final=final, target=target)

    def train(args):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        system = MassSpringSystem(
            num_particles=args.num_particles,
            springs=[(0, 1, 1.0, args.stiffness)],
            mass=args.mass,
            dt=args.dt,
            gravity=args.gravity,
            device=device,
        )

        optimizer = optim.Adam(system.parameters(), lr=args.lr)
        target_positions = torch.tensor(
            [[0.0, 0.0], [1.0, 0.0]], device=device
        )

        for epoch in range(args.epochs):
            optimizer.zero_grad()
            final_positions = system(args.steps)
            loss = (final_positions - target_positions).pow(2).mean()
            loss.backward()
            optimizer.step()

            if (epoch + 1) % args.log_interval == 0:
                print(f"Epoch {epoch+1}/{args.epochs}, Loss: {loss.item():.6f}")

        # Visualization
        initial_positions = torch.cat([system.initial_position_0.unsqueeze(0), system.initial_positions_rest.detach()], dim=0).cpu().numpy()
        visualize_positions(initial_positions, final_positions.detach().cpu().numpy(), target_positions.cpu().numpy())

        print("\nTraining completed.")
        print(f"Final positions:\n{final_positions.detach().cpu().numpy()}")
        print(f"Target positions:\n{target_positions.cpu().numpy()}")

    def evaluate(args):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        system = MassSpringSystem(
            num_particles=args.num_particles,
            springs=[(0, 1, 1.0, args.stiffness)],
            mass=args.mass,
            dt=args.dt,
            gravity=args.gravity,
            device=device,
        )

        with torch.no_grad():
            final_positions = system(args.steps)
            print(f"Final positions after {args.steps} steps:\n{final_positions.cpu().numpy()}")
        shown["eval"] = numpy_of(final_positions)

    def parse_args(argv):
        parser = argparse.ArgumentParser(description="Differentiable Physics: Mass-Spring System")
        parser.add_argument("--epochs", type=int, default=1000, help="Number of training epochs")
        parser.add_argument("--steps", type=int, default=50, help="Number of simulation steps per forward pass")
        parser.add_argument("--lr", type=float, default=0.01, help="Learning rate")
        parser.add_argument("--dt", type=float, default=0.01, help="Time step for integration")
        parser.add_argument("--mass", type=float, default=1.0, help="Mass of each particle")
        parser.add_argument("--stiffness", type=float, default=10.0, help="Spring stiffness constant")
        parser.add_argument("--num_particles", type=int, default=2, help="Number of particles in the system")
        parser.add_argument("--mode", choices=["train", "eval"], default="train", help="Mode: train or eval")
        parser.add_argument("--log_interval", type=int, default=100, help="Print loss every n epochs")
        parser.add_argument("--gravity", type=float, default=9.81, help="Gravity strength")
        return parser.parse_args(argv)

    def main(argv):
        args = parse_args(argv)

        if args.mode == "train":
            train(args)
        elif args.mode == "eval":
            evaluate(args)

    with captured_run(torch, 0) as out:
        main(list(argv))
        main(list(argv) + ["--mode", "eval", "--num_particles", "3"])
    return {"printed": printed_lines(out), **shown}


def test_examples_mass_spring():
    ref, got = compare_program(mass_spring, rtol=1e-4, atol=1e-5)
    assert got["printed"][0].startswith("Epoch 10/40, Loss: ")
