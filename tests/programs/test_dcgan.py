"""A DCGAN training step in the style of the PyTorch examples, on 16x16 images: a generator of
ConvTranspose2d + BatchNorm2d + ReLU ending in Tanh, a discriminator of strided Conv2d +
BatchNorm2d + LeakyReLU ending in Sigmoid; weights_init by class name; BCELoss with real/fake
labels made by torch.full, the fake batch .detach()ed for the discriminator's step, two Adam
optimizers with betas (0.5, 0.999); D(x), D(G(z)) reported the way the example prints them."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

NZ, NGF, NDF, NC = 8, 8, 8, 1


def dcgan(torch, init=None, steps=4, batch=8):
    nn = torch.nn
    torch.manual_seed(0)

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(NZ, NGF * 4, 4, 1, 0, bias=False),  # 4x4
                nn.BatchNorm2d(NGF * 4),
                nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 4, NGF * 2, 4, 2, 1, bias=False),  # 8x8
                nn.BatchNorm2d(NGF * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(NGF * 2, NC, 4, 2, 1, bias=False),  # 16x16
                nn.Tanh(),
            )

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(NC, NDF, 4, 2, 1, bias=False),  # 8x8
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF, NDF * 2, 4, 2, 1, bias=False),  # 4x4
                nn.BatchNorm2d(NDF * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(NDF * 2, 1, 4, 1, 0, bias=False),
                nn.Sigmoid(),
            )

        def forward(self, input):
            return self.main(input).view(-1, 1).squeeze(1)

    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    result = {}
    start_from(torch, {"G": netG, "D": netD}, init, result)
    criterion = nn.BCELoss()
    real_label, fake_label = 1.0, 0.0
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    rng = np.random.default_rng(0)
    log = []
    for i in range(steps):
        real_cpu = torch.from_numpy(np.tanh(rng.standard_normal((batch, NC, 16, 16))).astype(np.float32))
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=real_cpu.dtype)
        output = netD(real_cpu)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.from_numpy(rng.standard_normal((b_size, NZ, 1, 1)).astype(np.float32))
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        log.append([errD.item(), errG.item(), D_x, D_G_z1, D_G_z2])
        print("[%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f"
              % (i, steps, errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
    netG.eval()
    with torch.no_grad():
        fixed = netG(torch.from_numpy(rng.standard_normal((4, NZ, 1, 1)).astype(np.float32))).detach().cpu()
    result.update(log=np.array(log), fixed=numpy_of(fixed), G=netG.state_dict(), D=netD.state_dict())
    result["G"] = {k: numpy_of(v) for k, v in result["G"].items()}
    result["D"] = {k: numpy_of(v) for k, v in result["D"].items()}
    return result


def test_dcgan_two_optimizers_detach():
    ref, got = compare_program(dcgan, rtol=1e-3, atol=1e-4)
    assert ref["fixed"].shape == (4, NC, 16, 16)
